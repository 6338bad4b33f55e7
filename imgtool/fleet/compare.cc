#include "fleet/compare.h"
