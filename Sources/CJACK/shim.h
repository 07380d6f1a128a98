#ifndef AQSYNC_CJACK_SHIM_H
#define AQSYNC_CJACK_SHIM_H
#include <jack/jack.h>
#include <jack/types.h>
#endif
