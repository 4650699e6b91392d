#include "vkattn/version.h"

uint32_t vkattn_get_version(void) { return VKATTN_VERSION; }
