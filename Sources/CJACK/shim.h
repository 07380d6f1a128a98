#ifndef AQSYNC_CJACK_SHIM_H
#define AQSYNC_CJACK_SHIM_H
#include <jack/jack.h>
#include <jack/types.h>
#include <jack/thread.h>
#include <sys/prctl.h>
#include <pthread.h>

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

/* libjack's thread init callback for aqsync's clients (`arg`: the client): names the
   client's process thread "aqsync-render" for the kernel (top -H, ps -L, perf, gdb; a new
   thread otherwise keeps the name of the thread that activated the client, a dispatch
   worker's), and any other thread it is called on "aqsync-jack": jackd2's libjack calls it on
   its message thread (in jack_set_thread_init_callback) and on its notification thread (at
   the activation's notice, after the process thread has started); pipewire-jack only on the
   process thread, at its first cycle. One system call, nothing allocated. */
static void aq_jack_name_render_thread(void *arg) {
    jack_native_thread_t process = jack_client_thread_id((jack_client_t *)arg);
    prctl(PR_SET_NAME, pthread_equal(process, pthread_self()) ? "aqsync-render" : "aqsync-jack", 0, 0, 0);
}

/* Installs aq_jack_name_render_thread; before jack_activate. 0 on success. */
static inline int aq_jack_set_render_thread_name(jack_client_t *client) {
    return jack_set_thread_init_callback(client, aq_jack_name_render_thread, client);
}

#endif
