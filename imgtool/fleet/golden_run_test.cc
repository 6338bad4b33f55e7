#include <gtest/gtest.h>
#include "fleet/golden_run.h"
