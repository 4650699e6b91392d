/* The dry-recording marker (vk/prepare.h). */
#include "vk/prepare.h"

const char vka_dry_marker = 0;
