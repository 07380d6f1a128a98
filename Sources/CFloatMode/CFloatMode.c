// Everything else is in the header (static inline).
#include "CFloatMode.h"

__thread int aq_float_flushing __attribute__((tls_model("initial-exec"), visibility("hidden"))) = 0;
