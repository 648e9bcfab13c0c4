// The few libcurl functions and constants Errand uses, declared here rather than taken from
// curl's headers so that building needs no development package: the library itself is loaded
// at run time with dlopen. The values are libcurl's public, stable ABI.
#ifndef CERRANDCURL_H
#define CERRANDCURL_H

#include <stddef.h>
#include <stdint.h>

// Option numbers: the type base (0 long, 10000 pointer, 20000 function, 30000 curl_off_t) plus the option's index.
#define ERRAND_CURLOPT_WRITEDATA 10001
#define ERRAND_CURLOPT_URL 10002
#define ERRAND_CURLOPT_READDATA 10009
#define ERRAND_CURLOPT_WRITEFUNCTION 20011
#define ERRAND_CURLOPT_READFUNCTION 20012
#define ERRAND_CURLOPT_HTTPHEADER 10023
#define ERRAND_CURLOPT_CAINFO 10065
#define ERRAND_CURLOPT_HEADERDATA 10029
#define ERRAND_CURLOPT_CUSTOMREQUEST 10036
#define ERRAND_CURLOPT_NOPROGRESS 43
#define ERRAND_CURLOPT_NOBODY 44
#define ERRAND_CURLOPT_UPLOAD 46
#define ERRAND_CURLOPT_HEADERFUNCTION 20079
#define ERRAND_CURLOPT_HTTPGET 80
#define ERRAND_CURLOPT_HTTP_VERSION 84
#define ERRAND_CURLOPT_BUFFERSIZE 98
#define ERRAND_CURLOPT_NOSIGNAL 99
#define ERRAND_CURLOPT_ACCEPT_ENCODING 10102
#define ERRAND_CURLOPT_PRIVATE 10103
#define ERRAND_CURLOPT_INFILESIZE_LARGE 30115
#define ERRAND_CURLOPT_TCP_NODELAY 121
#define ERRAND_CURLOPT_CONNECTTIMEOUT_MS 156
#define ERRAND_CURLOPT_HTTP_TRANSFER_DECODING 157
#define ERRAND_CURLOPT_HTTP_CONTENT_DECODING 158
#define ERRAND_CURL_VERSION_LIBZ (1 << 3)
#define ERRAND_CURL_VERSION_BROTLI (1 << 23)
#define ERRAND_CURL_VERSION_ZSTD (1 << 26)
#define ERRAND_CURLOPT_SEEKFUNCTION 20167
#define ERRAND_CURLOPT_SEEKDATA 10168
#define ERRAND_CURLOPT_PINNEDPUBLICKEY 10230
#define ERRAND_CURLOPT_SUPPRESS_CONNECT_HEADERS 265
#define ERRAND_CURLOPT_PROXY 10004
#define ERRAND_CURLOPT_ERRORBUFFER 10010
#define ERRAND_CURLOPT_SSLCERT 10025
#define ERRAND_CURLOPT_KEYPASSWD 10026
#define ERRAND_CURLOPT_FRESH_CONNECT 74
#define ERRAND_CURLOPT_FORBID_REUSE 75
#define ERRAND_CURLOPT_SSLCERTTYPE 10086
#define ERRAND_CURLOPT_SSLKEY 10087
#define ERRAND_CURLOPT_SSLKEYTYPE 10088
#define ERRAND_CURLOPT_CAPATH 10097
#define ERRAND_CURLOPT_NOPROXY 10177
#define ERRAND_CURLOPT_RESOLVE 10203
#define ERRAND_CURLOPT_UNIX_SOCKET_PATH 10231
#define ERRAND_CURLOPT_PIPEWAIT 237
#define ERRAND_CURLOPT_MAXAGE_CONN 288
#define ERRAND_CURLOPT_CONNECT_ONLY 141
#define ERRAND_CURLOPT_HTTPPROXYTUNNEL 61
#define ERRAND_CURLOPT_CLOSESOCKETFUNCTION 20208
#define ERRAND_CURLOPT_CLOSESOCKETDATA 10209
#define ERRAND_CURLOPT_TRAILERFUNCTION 20283
#define ERRAND_CURLOPT_SOCKOPTFUNCTION 20148
#define ERRAND_CURLOPT_TRAILERDATA 10284
// Blob options (type base 40000) take a `struct curl_blob`; see errand_curl_easy_setopt_blob.
#define ERRAND_CURLOPT_CAINFO_BLOB 40309

#define ERRAND_CURLMOPT_PIPELINING 3
#define ERRAND_CURLMOPT_MAXCONNECTS 6
#define ERRAND_CURLMOPT_MAX_HOST_CONNECTIONS 7
#define ERRAND_CURLMOPT_SOCKETFUNCTION 20001
#define ERRAND_CURLMOPT_SOCKETDATA 10002
#define ERRAND_CURLMOPT_TIMERFUNCTION 20004
#define ERRAND_CURLMOPT_TIMERDATA 10005
// The socket callback's `what`, and curl_multi_socket_action's socket and event bits.
#define ERRAND_CURL_POLL_IN 1
#define ERRAND_CURL_POLL_OUT 2
#define ERRAND_CURL_POLL_REMOVE 4
#define ERRAND_CURL_SOCKET_TIMEOUT (-1)
#define ERRAND_CURL_CSELECT_IN 1
#define ERRAND_CURL_CSELECT_OUT 2
#define ERRAND_CURL_CSELECT_ERR 4

// Info numbers: the type base (0x200000 long, 0x100000 string or pointer, 0x600000 curl_off_t) plus the index.
#define ERRAND_CURLINFO_RESPONSE_CODE 0x200002
#define ERRAND_CURLINFO_HTTP_VERSION 0x20002E
#define ERRAND_CURLINFO_HTTP_CONNECTCODE 0x200016
#define ERRAND_CURLINFO_NUM_CONNECTS 0x20001A
#define ERRAND_CURLINFO_REQUEST_SIZE 0x20000C
#define ERRAND_CURLINFO_PRIMARY_IP 0x100020
#define ERRAND_CURLINFO_CAINFO 0x10003D
#define ERRAND_CURLINFO_TOTAL_TIME_T 0x600032
#define ERRAND_CURLINFO_NAMELOOKUP_TIME_T 0x600033
#define ERRAND_CURLINFO_CONNECT_TIME_T 0x600034
#define ERRAND_CURLINFO_STARTTRANSFER_TIME_T 0x600036
#define ERRAND_CURLINFO_APPCONNECT_TIME_T 0x600038
// A curl_socket_t (0x500000 base).
#define ERRAND_CURLINFO_ACTIVESOCKET 0x50002C

#define ERRAND_CURL_WRITEFUNC_PAUSE 0x10000001
#define ERRAND_CURL_READFUNC_ABORT 0x10000000
#define ERRAND_CURL_SEEKFUNC_OK 0
#define ERRAND_CURL_SEEKFUNC_CANTSEEK 2
#define ERRAND_CURL_READFUNC_PAUSE 0x10000001
#define ERRAND_CURL_TRAILERFUNC_OK 0
#define ERRAND_CURL_TRAILERFUNC_ABORT 1
#define ERRAND_CURLPAUSE_CONT 0
#define ERRAND_CURLPAUSE_RECV 1
#define ERRAND_CURLPAUSE_SEND 4
#define ERRAND_CURL_HTTP_VERSION_1_0 1
#define ERRAND_CURL_HTTP_VERSION_1_1 2
#define ERRAND_CURL_HTTP_VERSION_2 3
#define ERRAND_CURL_HTTP_VERSION_2TLS 4
#define ERRAND_CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE 5
#define ERRAND_CURL_HTTP_VERSION_3 30
#define ERRAND_CURLPIPE_MULTIPLEX 2
/// The size libcurl requires of a `CURLOPT_ERRORBUFFER`.
#define ERRAND_CURL_ERROR_SIZE 256

// CURLcode values Errand tells apart.
#define ERRAND_CURLE_OK 0
#define ERRAND_CURLM_OK 0
#define ERRAND_CURLE_UNSUPPORTED_PROTOCOL 1
#define ERRAND_CURLE_URL_MALFORMAT 3
#define ERRAND_CURLE_COULDNT_RESOLVE_PROXY 5
#define ERRAND_CURLE_COULDNT_RESOLVE_HOST 6
#define ERRAND_CURLE_COULDNT_CONNECT 7
#define ERRAND_CURLE_WEIRD_SERVER_REPLY 8
#define ERRAND_CURLE_HTTP2 16
#define ERRAND_CURLE_PARTIAL_FILE 18
#define ERRAND_CURLE_READ_ERROR 26
#define ERRAND_CURLE_OPERATION_TIMEDOUT 28
#define ERRAND_CURLE_SSL_CONNECT_ERROR 35
#define ERRAND_CURLE_ABORTED_BY_CALLBACK 42
#define ERRAND_CURLE_TOO_MANY_REDIRECTS 47
#define ERRAND_CURLE_GOT_NOTHING 52
#define ERRAND_CURLE_SEND_ERROR 55
#define ERRAND_CURLE_RECV_ERROR 56
#define ERRAND_CURLE_SSL_ENGINE_SETFAILED 54
#define ERRAND_CURLE_SSL_CERTPROBLEM 58
#define ERRAND_CURLE_SSL_CIPHER 59
#define ERRAND_CURLE_PEER_FAILED_VERIFICATION 60
#define ERRAND_CURLE_BAD_CONTENT_ENCODING 61
#define ERRAND_CURLE_SEND_FAIL_REWIND 65
#define ERRAND_CURLE_SSL_CACERT_BADFILE 77
#define ERRAND_CURLE_SSL_PINNEDPUBKEYNOTMATCH 90
#define ERRAND_CURLE_HTTP2_STREAM 92
#define ERRAND_CURLE_PROXY 97
#define ERRAND_CURLE_SSL_CLIENTCERT 98
#define ERRAND_CURLE_AGAIN 81

// `struct curl_waitfd`'s event bits.
#define ERRAND_CURL_WAIT_POLLIN 1
#define ERRAND_CURL_WAIT_POLLOUT 4

/// libcurl's `struct curl_waitfd`: a socket of the application's that `curl_multi_poll` watches too.
typedef struct {
    int fd;
    short events;
    short revents;
} errand_curl_waitfd;

/// Sockets the curl thread watches itself, beside libcurl's: an epoll instance on Linux, one
/// descriptor for `curl_multi_poll` however many sockets there are, and with it an eventfd in the
/// set (`*wake`) that other threads write to wake the curl thread. -1 where there is none; the
/// caller then hands its sockets to `curl_multi_poll` one by one.
int errand_socket_watch_create(int *wake);
/// Watches `fd` for `events` (ERRAND_CURL_WAIT_POLLIN and ERRAND_CURL_WAIT_POLLOUT bits) under
/// `token`, or stops watching it when `events` is 0; `was_watched` says whether it was until now.
int errand_socket_watch_set(int watch, int fd, short events, int was_watched, unsigned long long token);
/// Wakes a thread waiting on `watch`, from any thread.
void errand_socket_watch_wake(int wake);
/// The tokens of up to `capacity` watched sockets that are ready, waiting up to `timeout_ms` for
/// one or a wake: their count, or -1. A wake is taken, and not counted. A token with
/// ERRAND_CURL_SOCKET_TOKEN set is one of libcurl's sockets: its low 32 bits are the descriptor,
/// the next 8 what happened, as CURL_CSELECT_* bits.
int errand_socket_watch_ready(int watch, int wake, unsigned long long *tokens, int capacity, int timeout_ms);
void errand_socket_watch_close(int watch, int wake);
/// Marks libcurl's own sockets among a watch's tokens; the application's stay below it.
#define ERRAND_CURL_SOCKET_TOKEN (1ULL << 62)
/// Puts the sockets of `multi`'s transfers into `watch` as libcurl asks for them
/// (`CURLMOPT_SOCKETFUNCTION`) and keeps the timeout it asks for (`CURLMOPT_TIMERFUNCTION`), to
/// be driven with curl_multi_socket_action. The state to pass below and free with
/// errand_curl_multi_unwatch after the multi handle; NULL where there is no epoll.
void *errand_curl_multi_watch(void *multi, int watch);
/// Milliseconds until libcurl's timeout is due, rounded up; 0 when due, -1 when none is set.
int errand_curl_timer_milliseconds(void *watching);
/// 1, clearing it, when libcurl's timeout is due: call curl_multi_socket_action(CURL_SOCKET_TIMEOUT).
int errand_curl_timer_take_due(void *watching);
void errand_curl_multi_unwatch(void *watching);
/// Hands libcurl one of its sockets that the watch reported ready (`ready`: CURL_CSELECT_* bits)
/// with curl_multi_socket_action — unless libcurl no longer wants it, when it leaves the watch.
int errand_curl_socket_ready(void *multi, void *watching, int fd, int ready, int *running);
/// Makes the connections `easy` opens close their sockets through the watch, which first takes
/// them out of its set; set on every handle before it starts. 0, or -1 where there is no epoll.
int errand_curl_watch_closes(void *easy, void *watching);

/// A write, header or read callback: `(buffer, size, count, userdata)`, as libcurl calls them.
typedef size_t (*errand_curl_data_callback)(char *buffer, size_t size, size_t count, void *userdata);
/// A seek callback: `(userdata, offset, origin)`.
typedef int (*errand_curl_seek_callback)(void *userdata, int64_t offset, int origin);
/// `CURLOPT_TRAILERFUNCTION`: appends a chunked request body's trailer lines to `*list` with
/// `errand_curl_slist_append`; libcurl frees the list.
typedef int (*errand_curl_trailer_callback)(void **list, void *userdata);

/// Loads libcurl and initialises it once; 1 when every function Errand uses was found, else 0.
int errand_curl_load(void);
/// The loaded library's version as `0xXXYYZZ` (major, minor, patch), as `LIBCURL_VERSION_NUM`.
unsigned int errand_curl_version_number(void);
/// The loaded library's `features` bits (`CURL_VERSION_*`); 0 when it is not loaded.
int errand_curl_features(void);

void *errand_curl_easy_init(void);
void errand_curl_easy_cleanup(void *easy);
void errand_curl_easy_reset(void *easy);
int errand_curl_easy_setopt_long(void *easy, int option, long value);
int errand_curl_easy_setopt_pointer(void *easy, int option, const void *value);
int errand_curl_easy_setopt_string(void *easy, int option, const char *value);
int errand_curl_easy_setopt_off(void *easy, int option, int64_t value);
/// Sets a blob option to `length` bytes at `data`, not copied: they must outlive every transfer that uses them.
int errand_curl_easy_setopt_blob(void *easy, int option, const void *data, size_t length);
int errand_curl_easy_setopt_data_callback(void *easy, int option, errand_curl_data_callback callback);
int errand_curl_easy_setopt_seek_callback(void *easy, int option, errand_curl_seek_callback callback);
int errand_curl_easy_setopt_trailer_callback(void *easy, int option, errand_curl_trailer_callback callback);
/// `CURLOPT_SOCKOPTFUNCTION`: called with each new socket (`fd`) before it connects; returns 0.
typedef int (*errand_curl_sockopt_callback)(void *userdata, int fd, int purpose);
int errand_curl_easy_setopt_sockopt_callback(void *easy, int option, errand_curl_sockopt_callback callback);
int errand_curl_easy_getinfo_long(void *easy, int info, long *value);
int errand_curl_easy_getinfo_off(void *easy, int info, int64_t *value);
int errand_curl_easy_getinfo_string(void *easy, int info, const char **value);
int errand_curl_easy_pause(void *easy, int bitmask);
/// The socket of a `CURLOPT_CONNECT_ONLY` transfer once it connected; -1 otherwise.
int errand_curl_easy_active_socket(void *easy);
/// Raw bytes over a `CURLOPT_CONNECT_ONLY` connection (TLS and proxy tunnel included);
/// `CURLE_AGAIN` when the socket cannot take or give any now.
int errand_curl_easy_send(void *easy, const void *buffer, size_t length, size_t *sent);
int errand_curl_easy_recv(void *easy, void *buffer, size_t length, size_t *received);
/// The same over a connection with no TLS on it, straight on its socket `fd`: libcurl 7.x finds
/// a connect-only handle's connection by walking every connection the multi handle holds, on
/// each call. Returns what those return: `CURLE_AGAIN`, `CURLE_SEND_ERROR` or `CURLE_RECV_ERROR`.
int errand_socket_send(int fd, const void *buffer, size_t length, size_t *sent);
int errand_socket_recv(int fd, void *buffer, size_t length, size_t *received);
/// A descriptor of the connection `fd` is, of the caller's own, closed on exec; -1 on failure.
/// A connection with no TLS is taken from libcurl this way: libcurl then closes only its own
/// number, and bytes never go to another connection that was given that number.
int errand_socket_duplicate(int fd);
/// Sends the peer the end of the stream (a FIN), still reading what it sends.
void errand_socket_shutdown_writing(int fd);
void errand_socket_close(int fd);
const char *errand_curl_easy_strerror(int code);

void *errand_curl_slist_append(void *list, const char *string);
void errand_curl_slist_free_all(void *list);

void *errand_curl_multi_init(void);
int errand_curl_multi_cleanup(void *multi);
int errand_curl_multi_setopt_long(void *multi, int option, long value);
int errand_curl_multi_add_handle(void *multi, void *easy);
int errand_curl_multi_remove_handle(void *multi, void *easy);
int errand_curl_multi_perform(void *multi, int *running);
/// Waits for the transfers' sockets and `extra` more (`extra_count` of them), at most `timeout_ms`.
int errand_curl_multi_poll(void *multi, errand_curl_waitfd *extra, unsigned extra_count, int timeout_ms);
int errand_curl_multi_wakeup(void *multi);
/// Tells libcurl that `fd` (or ERRAND_CURL_SOCKET_TIMEOUT) is ready for `events` (CURL_CSELECT_* bits).
int errand_curl_multi_socket_action(void *multi, int fd, int events, int *running);
/// libcurl's description of a `CURLMcode`, or NULL.
const char *errand_curl_multi_strerror(int code);
/// The next finished transfer, if any: 1 with `easy` and `result` set, else 0.
int errand_curl_multi_next_done(void *multi, void **easy, int *result);

#endif
