#include <gtest/gtest.h>
#include "fleet/fingerprint.h"
