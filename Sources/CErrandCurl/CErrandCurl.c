#include "CErrandCurl.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <pthread.h>
#include <sys/socket.h>
#ifdef __linux__
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#endif

// libcurl's message for a finished transfer; only the layout matters here.
typedef struct {
    int msg;
    void *easy;
    union {
        void *whatever;
        int result;
    } data;
} errand_curl_message;

// The head of libcurl's `curl_version_info_data`, whose layout every version keeps.
typedef struct {
    int age;
    const char *version;
    unsigned int version_num;
    const char *host;
    int features;
} errand_curl_version_info;

// libcurl's `struct curl_blob`.
typedef struct {
    const void *data;
    size_t len;
    unsigned int flags;
} errand_curl_blob;

#define ERRAND_CURL_BLOB_NOCOPY 0
#define ERRAND_CURLMSG_DONE 1
#define ERRAND_CURL_GLOBAL_ALL 3

static struct {
    int (*global_init)(long flags);
    void *(*easy_init)(void);
    void (*easy_cleanup)(void *);
    void (*easy_reset)(void *);
    int (*easy_setopt)(void *, int, ...);
    int (*easy_getinfo)(void *, int, ...);
    int (*easy_pause)(void *, int);
    int (*easy_send)(void *, const void *, size_t, size_t *);
    int (*easy_recv)(void *, void *, size_t, size_t *);
    const char *(*easy_strerror)(int);
    void *(*slist_append)(void *, const char *);
    void (*slist_free_all)(void *);
    void *(*multi_init)(void);
    int (*multi_cleanup)(void *);
    int (*multi_setopt)(void *, int, ...);
    int (*multi_add_handle)(void *, void *);
    int (*multi_remove_handle)(void *, void *);
    int (*multi_perform)(void *, int *);
    int (*multi_poll)(void *, errand_curl_waitfd *, unsigned, int, int *);
    int (*multi_wakeup)(void *);
    int (*multi_socket_action)(void *, int, int, int *);
    errand_curl_message *(*multi_info_read)(void *, int *);
    const char *(*multi_strerror)(int);
    errand_curl_version_info *(*version_info)(int);
} curl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded = 0;

static void *open_library(void) {
    // The versioned name is what distributions install without a development package.
    static const char *const names[] = {"libcurl.so.4", "libcurl.so", "libcurl-gnutls.so.4", "libcurl.4.dylib"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (library) return library;
    }
    return NULL;
}

#define ERRAND_LOAD(field, symbol) \
    if (!(*(void **)(&curl.field) = dlsym(library, symbol))) return;

static void load(void) {
    void *library = open_library();
    if (!library) return;
    ERRAND_LOAD(global_init, "curl_global_init")
    ERRAND_LOAD(easy_init, "curl_easy_init")
    ERRAND_LOAD(easy_cleanup, "curl_easy_cleanup")
    ERRAND_LOAD(easy_reset, "curl_easy_reset")
    ERRAND_LOAD(easy_setopt, "curl_easy_setopt")
    ERRAND_LOAD(easy_getinfo, "curl_easy_getinfo")
    ERRAND_LOAD(easy_pause, "curl_easy_pause")
    ERRAND_LOAD(easy_send, "curl_easy_send")
    ERRAND_LOAD(easy_recv, "curl_easy_recv")
    ERRAND_LOAD(easy_strerror, "curl_easy_strerror")
    ERRAND_LOAD(slist_append, "curl_slist_append")
    ERRAND_LOAD(slist_free_all, "curl_slist_free_all")
    ERRAND_LOAD(multi_init, "curl_multi_init")
    ERRAND_LOAD(multi_cleanup, "curl_multi_cleanup")
    ERRAND_LOAD(multi_setopt, "curl_multi_setopt")
    ERRAND_LOAD(multi_add_handle, "curl_multi_add_handle")
    ERRAND_LOAD(multi_remove_handle, "curl_multi_remove_handle")
    ERRAND_LOAD(multi_perform, "curl_multi_perform")
    // curl_multi_poll and curl_multi_wakeup arrived in libcurl 7.68; an older library is not used.
    ERRAND_LOAD(multi_poll, "curl_multi_poll")
    ERRAND_LOAD(multi_wakeup, "curl_multi_wakeup")
    ERRAND_LOAD(multi_info_read, "curl_multi_info_read")
    ERRAND_LOAD(multi_socket_action, "curl_multi_socket_action")
    ERRAND_LOAD(version_info, "curl_version_info")
    // Only for messages: its absence does not make libcurl unusable.
    *(void **)(&curl.multi_strerror) = dlsym(library, "curl_multi_strerror");
    // Not thread-safe in old versions, hence once, before any handle exists.
    loaded = curl.global_init(ERRAND_CURL_GLOBAL_ALL) == ERRAND_CURLE_OK;
}

int errand_curl_load(void) {
    pthread_once(&load_once, load);
    return loaded;
}

unsigned int errand_curl_version_number(void) {
    // Any age returns the library's own structure; its head is all that is read.
    errand_curl_version_info *info = loaded ? curl.version_info(0) : NULL;
    return info ? info->version_num : 0;
}

int errand_curl_features(void) {
    errand_curl_version_info *info = loaded ? curl.version_info(0) : NULL;
    return info ? info->features : 0;
}

void *errand_curl_easy_init(void) { return curl.easy_init(); }
void errand_curl_easy_cleanup(void *easy) { curl.easy_cleanup(easy); }
void errand_curl_easy_reset(void *easy) { curl.easy_reset(easy); }

int errand_curl_easy_setopt_long(void *easy, int option, long value) { return curl.easy_setopt(easy, option, value); }

int errand_curl_easy_setopt_pointer(void *easy, int option, const void *value) {
    return curl.easy_setopt(easy, option, value);
}

int errand_curl_easy_setopt_string(void *easy, int option, const char *value) {
    return curl.easy_setopt(easy, option, value);
}

int errand_curl_easy_setopt_off(void *easy, int option, int64_t value) {
    return curl.easy_setopt(easy, option, value);
}

int errand_curl_easy_setopt_blob(void *easy, int option, const void *data, size_t length) {
    // libcurl copies the structure, not the bytes it points at.
    errand_curl_blob blob = {data, length, ERRAND_CURL_BLOB_NOCOPY};
    return curl.easy_setopt(easy, option, &blob);
}

int errand_curl_easy_setopt_data_callback(void *easy, int option, errand_curl_data_callback callback) {
    return curl.easy_setopt(easy, option, callback);
}

int errand_curl_easy_setopt_seek_callback(void *easy, int option, errand_curl_seek_callback callback) {
    return curl.easy_setopt(easy, option, callback);
}

int errand_curl_easy_setopt_trailer_callback(void *easy, int option, errand_curl_trailer_callback callback) {
    return curl.easy_setopt(easy, option, callback);
}

int errand_curl_easy_setopt_sockopt_callback(void *easy, int option, errand_curl_sockopt_callback callback) {
    return curl.easy_setopt(easy, option, callback);
}

int errand_curl_easy_getinfo_long(void *easy, int info, long *value) { return curl.easy_getinfo(easy, info, value); }

int errand_curl_easy_getinfo_off(void *easy, int info, int64_t *value) {
    return curl.easy_getinfo(easy, info, value);
}

int errand_curl_easy_getinfo_string(void *easy, int info, const char **value) {
    return curl.easy_getinfo(easy, info, value);
}

int errand_curl_easy_pause(void *easy, int bitmask) { return curl.easy_pause(easy, bitmask); }

int errand_curl_easy_active_socket(void *easy) {
    // curl_socket_t is an int on every platform but Windows.
    int socket = -1;
    return curl.easy_getinfo(easy, ERRAND_CURLINFO_ACTIVESOCKET, &socket) == ERRAND_CURLE_OK ? socket : -1;
}

int errand_curl_easy_send(void *easy, const void *buffer, size_t length, size_t *sent) {
    return curl.easy_send(easy, buffer, length, sent);
}

int errand_curl_easy_recv(void *easy, void *buffer, size_t length, size_t *received) {
    return curl.easy_recv(easy, buffer, length, received);
}
int errand_socket_send(int fd, const void *buffer, size_t length, size_t *sent) {
#ifdef MSG_NOSIGNAL
    // A peer that closed must fail the write, not raise SIGPIPE in the app.
    const int flags = MSG_NOSIGNAL;
#else
    // libcurl set SO_NOSIGPIPE on the socket where there is no MSG_NOSIGNAL.
    const int flags = 0;
#endif
    *sent = 0;
    ssize_t count;
    do {
        count = send(fd, buffer, length, flags);
    } while (count < 0 && errno == EINTR);
    if (count >= 0) {
        *sent = (size_t)count;
        return ERRAND_CURLE_OK;
    }
    return errno == EAGAIN || errno == EWOULDBLOCK ? ERRAND_CURLE_AGAIN : ERRAND_CURLE_SEND_ERROR;
}

int errand_socket_recv(int fd, void *buffer, size_t length, size_t *received) {
    *received = 0;
    ssize_t count;
    do {
        count = recv(fd, buffer, length, 0);
    } while (count < 0 && errno == EINTR);
    if (count >= 0) {
        *received = (size_t)count;
        return ERRAND_CURLE_OK;
    }
    return errno == EAGAIN || errno == EWOULDBLOCK ? ERRAND_CURLE_AGAIN : ERRAND_CURLE_RECV_ERROR;
}

int errand_socket_duplicate(int fd) { return fcntl(fd, F_DUPFD_CLOEXEC, 0); }

void errand_socket_shutdown_writing(int fd) { shutdown(fd, SHUT_WR); }

void errand_socket_close(int fd) { close(fd); }

const char *errand_curl_easy_strerror(int code) { return curl.easy_strerror ? curl.easy_strerror(code) : NULL; }

void *errand_curl_slist_append(void *list, const char *string) { return curl.slist_append(list, string); }
void errand_curl_slist_free_all(void *list) { curl.slist_free_all(list); }

void *errand_curl_multi_init(void) { return curl.multi_init(); }
int errand_curl_multi_cleanup(void *multi) { return curl.multi_cleanup(multi); }

int errand_curl_multi_setopt_long(void *multi, int option, long value) {
    return curl.multi_setopt(multi, option, value);
}

int errand_curl_multi_add_handle(void *multi, void *easy) { return curl.multi_add_handle(multi, easy); }
int errand_curl_multi_remove_handle(void *multi, void *easy) { return curl.multi_remove_handle(multi, easy); }
int errand_curl_multi_perform(void *multi, int *running) { return curl.multi_perform(multi, running); }
int errand_curl_multi_poll(void *multi, errand_curl_waitfd *extra, unsigned extra_count, int timeout_ms) {
    return curl.multi_poll(multi, extra, extra_count, timeout_ms, NULL);
}
int errand_curl_multi_wakeup(void *multi) { return curl.multi_wakeup(multi); }
int errand_curl_multi_socket_action(void *multi, int fd, int events, int *running) {
    return curl.multi_socket_action(multi, fd, events, running);
}
const char *errand_curl_multi_strerror(int code) { return curl.multi_strerror ? curl.multi_strerror(code) : NULL; }

int errand_curl_multi_next_done(void *multi, void **easy, int *result) {
    int queued = 0;
    errand_curl_message *message;
    while ((message = curl.multi_info_read(multi, &queued))) {
        if (message->msg != ERRAND_CURLMSG_DONE) continue;
        *easy = message->easy;
        *result = message->data.result;
        return 1;
    }
    return 0;
}

#ifdef __linux__
// The eventfd's token: no socket's id.
static const unsigned long long errand_wake_token = ~0ULL;

int errand_socket_watch_create(int *wake) {
    int watch = epoll_create1(EPOLL_CLOEXEC);
    if (watch < 0) return -1;
    *wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct epoll_event event = {0};
    event.events = EPOLLIN;
    event.data.u64 = errand_wake_token;
    if (*wake < 0 || epoll_ctl(watch, EPOLL_CTL_ADD, *wake, &event) != 0) {
        if (*wake >= 0) close(*wake);
        close(watch);
        return -1;
    }
    return watch;
}

int errand_socket_watch_set(int watch, int fd, short events, int was_watched, unsigned long long token) {
    // A socket watched for nothing leaves the set: epoll would still report its hang-up, again and again.
    if (events == 0) return was_watched ? epoll_ctl(watch, EPOLL_CTL_DEL, fd, NULL) : 0;
    struct epoll_event event = {0};
    if (events & ERRAND_CURL_WAIT_POLLIN) event.events |= EPOLLIN;
    if (events & ERRAND_CURL_WAIT_POLLOUT) event.events |= EPOLLOUT;
    event.data.u64 = token;
    if (epoll_ctl(watch, was_watched ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &event) == 0) return 0;
    // libcurl may not yet have said it is done with a socket it connected: take it over.
    return !was_watched && errno == EEXIST ? epoll_ctl(watch, EPOLL_CTL_MOD, fd, &event) : -1;
}

void errand_socket_watch_wake(int wake) {
    uint64_t one = 1;
    // A full counter already wakes the thread: nothing is lost when this write is refused.
    ssize_t written = write(wake, &one, sizeof one);
    (void)written;
}

int errand_socket_watch_ready(int watch, int wake, unsigned long long *tokens, int capacity, int timeout_ms) {
    struct epoll_event events[256];
    int count = epoll_wait(watch, events, capacity < 256 ? capacity : 256, timeout_ms);
    int ready = 0;
    for (int index = 0; index < count; index++) {
        unsigned long long token = events[index].data.u64;
        if (token == errand_wake_token) {
            uint64_t wakes;
            ssize_t taken = read(wake, &wakes, sizeof wakes);
            (void)taken;
            continue;
        }
        if (token & ERRAND_CURL_SOCKET_TOKEN) {
            // libcurl is told what happened, as curl_multi_socket_action's CURL_CSELECT_* bits.
            unsigned long long happened = 0;
            if (events[index].events & EPOLLIN) happened |= ERRAND_CURL_CSELECT_IN;
            if (events[index].events & EPOLLOUT) happened |= ERRAND_CURL_CSELECT_OUT;
            if (events[index].events & (EPOLLERR | EPOLLHUP)) happened |= ERRAND_CURL_CSELECT_ERR;
            token |= happened << 32;
        }
        tokens[ready++] = token;
    }
    return count < 0 ? -1 : ready;
}

// libcurl's part in the epoll set, by descriptor.
enum {
    errand_socket_absent = 0,
    errand_socket_watched = 1,
    // Removed by libcurl — an idle connection back in its pool — but left in the set: the next
    // request on it wants it back, and a request each leaving and joining cost two system calls.
    // Closing the descriptor takes it out of the set by itself.
    errand_socket_idle = 2,
};

// What libcurl's socket and timer callbacks keep for the loop: the epoll set its sockets join,
// what each of its descriptors is in it, and when it next wants
// curl_multi_socket_action(CURL_SOCKET_TIMEOUT).
typedef struct {
    int watch;
    int has_deadline;
    struct timespec deadline;
    unsigned char *states;
    int capacity;
} errand_curl_events;

// The state of `fd`, with room made for it; NULL when there is none to be had.
static unsigned char *errand_curl_socket_state(errand_curl_events *events, int fd) {
    if (fd < 0) return NULL;
    if (fd >= events->capacity) {
        int capacity = events->capacity ? events->capacity : 1024;
        while (capacity <= fd) capacity *= 2;
        unsigned char *states = realloc(events->states, (size_t)capacity);
        if (!states) return NULL;
        memset(states + events->capacity, errand_socket_absent, (size_t)(capacity - events->capacity));
        events->states = states;
        events->capacity = capacity;
    }
    return &events->states[fd];
}

static int errand_curl_socket_changed(void *easy, int fd, int what, void *userp, void *socketp) {
    (void)easy;
    (void)socketp;
    errand_curl_events *events = userp;
    unsigned char *state = errand_curl_socket_state(events, fd);
    if (what == ERRAND_CURL_POLL_REMOVE) {
        if (state && *state == errand_socket_watched) {
            *state = errand_socket_idle;
        } else if (!state) {
            epoll_ctl(events->watch, EPOLL_CTL_DEL, fd, NULL);
        }
        return 0;
    }
    struct epoll_event event = {0};
    if (what & ERRAND_CURL_POLL_IN) event.events |= EPOLLIN;
    if (what & ERRAND_CURL_POLL_OUT) event.events |= EPOLLOUT;
    event.data.u64 = ERRAND_CURL_SOCKET_TOKEN | (unsigned int)fd;
    // An idle descriptor may have been closed since, and its number given to a new socket.
    int known = state && *state != errand_socket_absent;
    if (epoll_ctl(events->watch, known ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &event) != 0) {
        int failure = errno;
        if (failure == ENOENT) {
            epoll_ctl(events->watch, EPOLL_CTL_ADD, fd, &event);
        } else if (failure == EEXIST) {
            epoll_ctl(events->watch, EPOLL_CTL_MOD, fd, &event);
        }
    }
    if (state) *state = errand_socket_watched;
    return 0;
}

// libcurl closes its sockets through this once told to (errand_curl_watch_closes): an idle one
// still in the set leaves it first. Closing alone would not take it out when a child process
// inherited the descriptor — epoll watches the open file, not the number — and the set would
// report the dead connection under a number libcurl no longer knows, again and again.
static int errand_curl_close_socket(void *clientp, int fd) {
    errand_curl_events *events = clientp;
    unsigned char *state = errand_curl_socket_state(events, fd);
    if (!state || *state != errand_socket_absent) epoll_ctl(events->watch, EPOLL_CTL_DEL, fd, NULL);
    if (state) *state = errand_socket_absent;
    return close(fd);
}

int errand_curl_watch_closes(void *easy, void *watching) {
    if (curl.easy_setopt(easy, ERRAND_CURLOPT_CLOSESOCKETDATA, watching) != ERRAND_CURLE_OK) return -1;
    return curl.easy_setopt(easy, ERRAND_CURLOPT_CLOSESOCKETFUNCTION, errand_curl_close_socket);
}

int errand_curl_socket_ready(void *multi, void *watching, int fd, int ready, int *running) {
    errand_curl_events *events = watching;
    unsigned char *state = errand_curl_socket_state(events, fd);
    if (state && *state == errand_socket_idle) {
        // An idle connection the server closed, or that has bytes no request asked for: libcurl
        // finds out when it next looks at it. Until then the set must not report it again.
        epoll_ctl(events->watch, EPOLL_CTL_DEL, fd, NULL);
        *state = errand_socket_absent;
        return ERRAND_CURLM_OK;
    }
    return curl.multi_socket_action(multi, fd, ready, running);
}

static int errand_curl_timer_changed(void *multi, long timeout_ms, void *userp) {
    (void)multi;
    errand_curl_events *events = userp;
    events->has_deadline = timeout_ms >= 0;
    if (timeout_ms < 0) return 0;
    clock_gettime(CLOCK_MONOTONIC, &events->deadline);
    events->deadline.tv_sec += timeout_ms / 1000;
    events->deadline.tv_nsec += (timeout_ms % 1000) * 1000000L;
    if (events->deadline.tv_nsec >= 1000000000L) {
        events->deadline.tv_sec += 1;
        events->deadline.tv_nsec -= 1000000000L;
    }
    return 0;
}

void *errand_curl_multi_watch(void *multi, int watch) {
    errand_curl_events *events = calloc(1, sizeof *events);
    if (!events) return NULL;
    events->watch = watch;
    if (curl.multi_setopt(multi, ERRAND_CURLMOPT_SOCKETDATA, events) != ERRAND_CURLM_OK ||
        curl.multi_setopt(multi, ERRAND_CURLMOPT_SOCKETFUNCTION, errand_curl_socket_changed) != ERRAND_CURLM_OK ||
        curl.multi_setopt(multi, ERRAND_CURLMOPT_TIMERDATA, events) != ERRAND_CURLM_OK ||
        curl.multi_setopt(multi, ERRAND_CURLMOPT_TIMERFUNCTION, errand_curl_timer_changed) != ERRAND_CURLM_OK) {
        curl.multi_setopt(multi, ERRAND_CURLMOPT_SOCKETFUNCTION, NULL);
        curl.multi_setopt(multi, ERRAND_CURLMOPT_TIMERFUNCTION, NULL);
        free(events);
        return NULL;
    }
    return events;
}

int errand_curl_timer_milliseconds(void *watching) {
    errand_curl_events *events = watching;
    if (!events->has_deadline) return -1;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long remaining = (long long)(events->deadline.tv_sec - now.tv_sec) * 1000000000LL +
                          (events->deadline.tv_nsec - now.tv_nsec);
    if (remaining <= 0) return 0;
    // Rounded up: waking a millisecond early would only find the timer not yet due.
    long long milliseconds = (remaining + 999999) / 1000000;
    return milliseconds > 0x7fffffff ? 0x7fffffff : (int)milliseconds;
}

int errand_curl_timer_take_due(void *watching) {
    errand_curl_events *events = watching;
    if (errand_curl_timer_milliseconds(watching) != 0) return 0;
    events->has_deadline = 0;
    return 1;
}

void errand_curl_multi_unwatch(void *watching) {
    errand_curl_events *events = watching;
    if (!events) return;
    free(events->states);
    free(events);
}

void errand_socket_watch_close(int watch, int wake) {
    close(wake);
    close(watch);
}
#else
int errand_socket_watch_create(int *wake) { return -1; }
int errand_socket_watch_set(int watch, int fd, short events, int was_watched, unsigned long long token) {
    return -1;
}
void errand_socket_watch_wake(int wake) {}
int errand_socket_watch_ready(int watch, int wake, unsigned long long *tokens, int capacity, int timeout_ms) {
    return -1;
}
void errand_socket_watch_close(int watch, int wake) {}
void *errand_curl_multi_watch(void *multi, int watch) { return NULL; }
int errand_curl_timer_milliseconds(void *watching) { return -1; }
int errand_curl_timer_take_due(void *watching) { return 0; }
int errand_curl_socket_ready(void *multi, void *watching, int fd, int ready, int *running) { return 0; }
int errand_curl_watch_closes(void *easy, void *watching) { return -1; }
void errand_curl_multi_unwatch(void *watching) {}
#endif
