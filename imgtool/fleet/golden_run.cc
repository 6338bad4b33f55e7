#include "fleet/golden_run.h"
