#include "fleet/fingerprint.h"
