#include "fleet/probe.h"
