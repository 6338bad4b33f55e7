#include <gtest/gtest.h>
#include "fleet/compare.h"
