#ifndef AQSYNC_CJACK_SHIM_H
#define AQSYNC_CJACK_SHIM_H
#include <jack/jack.h>
#include <jack/types.h>
#include <jack/thread.h>

/* Only what Swift cannot call or name directly. */

/* jack_client_open is variadic. Opens `client_name` on the server `server_name` (the
   default server when NULL) and never starts a server. */
static inline jack_client_t *aq_jack_client_open(const char *client_name,
                                                 const char *server_name,
                                                 jack_status_t *status) {
    if (server_name != NULL) {
        return jack_client_open(client_name, (jack_options_t)(JackNoStartServer | JackServerName),
                                status, server_name);
    }
    return jack_client_open(client_name, JackNoStartServer, status);
}

/* JACK_DEFAULT_AUDIO_TYPE is a string macro. */
static inline const char *aq_jack_default_audio_type(void) { return JACK_DEFAULT_AUDIO_TYPE; }

#endif
