#include <gtest/gtest.h>
#include "fleet/gather.h"
