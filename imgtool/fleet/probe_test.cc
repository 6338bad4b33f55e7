#include <gtest/gtest.h>
#include "fleet/probe.h"
