#include "fleet/gather.h"
