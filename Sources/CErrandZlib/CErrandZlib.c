#include "CErrandZlib.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

// zlib's z_stream; its layout has been the library's ABI since 1.0.
typedef struct {
    const uint8_t *next_in;
    unsigned int avail_in;
    unsigned long total_in;
    uint8_t *next_out;
    unsigned int avail_out;
    unsigned long total_out;
    const char *msg;
    void *state;
    void *zalloc;
    void *zfree;
    void *opaque;
    int data_type;
    unsigned long adler;
    unsigned long reserved;
} errand_z_stream;

#define ERRAND_Z_DEFLATED 8
#define ERRAND_Z_DEFAULT_COMPRESSION (-1)
#define ERRAND_Z_DEFAULT_STRATEGY 0
#define ERRAND_Z_HUFFMAN_ONLY 2
#define ERRAND_Z_MEMORY_LEVEL 8

static struct {
    const char *(*version)(void);
    int (*inflate_init)(errand_z_stream *, int, const char *, int);
    int (*inflate)(errand_z_stream *, int);
    int (*inflate_reset)(errand_z_stream *);
    int (*inflate_end)(errand_z_stream *);
    int (*deflate_init)(errand_z_stream *, int, int, int, int, int, const char *, int);
    int (*deflate)(errand_z_stream *, int);
    int (*deflate_reset)(errand_z_stream *);
    int (*deflate_end)(errand_z_stream *);
} zlib;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded = 0;

static void *open_library(void) {
    static const char *const names[] = {"libz.so.1", "libz.so", "libz.1.dylib"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (library) return library;
    }
    return NULL;
}

#define ERRAND_LOAD(field, symbol) \
    if (!(*(void **)(&zlib.field) = dlsym(library, symbol))) return;

static void load(void) {
    void *library = open_library();
    if (!library) return;
    ERRAND_LOAD(version, "zlibVersion")
    ERRAND_LOAD(inflate_init, "inflateInit2_")
    ERRAND_LOAD(inflate, "inflate")
    ERRAND_LOAD(inflate_reset, "inflateReset")
    ERRAND_LOAD(inflate_end, "inflateEnd")
    ERRAND_LOAD(deflate_init, "deflateInit2_")
    ERRAND_LOAD(deflate, "deflate")
    ERRAND_LOAD(deflate_reset, "deflateReset")
    ERRAND_LOAD(deflate_end, "deflateEnd")
    // The init functions refuse a library whose major version differs from the caller's.
    loaded = zlib.version()[0] == '1';
}

int errand_zlib_load(void) {
    pthread_once(&load_once, load);
    return loaded;
}

void *errand_inflater_create(int window_bits) {
    if (!errand_zlib_load()) return NULL;
    errand_z_stream *stream = calloc(1, sizeof *stream);
    if (!stream) return NULL;
    if (zlib.inflate_init(stream, -window_bits, zlib.version(), (int)sizeof *stream) != ERRAND_Z_OK) {
        free(stream);
        return NULL;
    }
    return stream;
}

void *errand_deflater_create(int window_bits, int huffman_only) {
    if (!errand_zlib_load()) return NULL;
    errand_z_stream *stream = calloc(1, sizeof *stream);
    if (!stream) return NULL;
    int strategy = huffman_only ? ERRAND_Z_HUFFMAN_ONLY : ERRAND_Z_DEFAULT_STRATEGY;
    if (zlib.deflate_init(stream, ERRAND_Z_DEFAULT_COMPRESSION, ERRAND_Z_DEFLATED, -window_bits,
                          ERRAND_Z_MEMORY_LEVEL, strategy, zlib.version(), (int)sizeof *stream) != ERRAND_Z_OK) {
        free(stream);
        return NULL;
    }
    return stream;
}

void errand_inflater_destroy(void *stream) {
    zlib.inflate_end(stream);
    free(stream);
}

void errand_deflater_destroy(void *stream) {
    zlib.deflate_end(stream);
    free(stream);
}

int errand_inflater_reset(void *stream) { return zlib.inflate_reset(stream); }
int errand_deflater_reset(void *stream) { return zlib.deflate_reset(stream); }

// zlib counts in unsigned int: larger buffers are offered a piece at a time by the caller's loop.
static unsigned int clamped(size_t count) { return count > UINT_MAX ? UINT_MAX : (unsigned int)count; }

static int run(int (*step)(errand_z_stream *, int), void *opaque, const uint8_t *input, size_t input_count,
               uint8_t *output, size_t output_count, int flush, size_t *consumed, size_t *produced) {
    errand_z_stream *stream = opaque;
    stream->next_in = input;
    stream->avail_in = clamped(input_count);
    stream->next_out = output;
    stream->avail_out = clamped(output_count);
    int result = step(stream, flush);
    *consumed = (size_t)(stream->next_in - input);
    *produced = (size_t)(stream->next_out - output);
    stream->next_in = NULL;
    stream->next_out = NULL;
    return result;
}

int errand_inflate(void *stream, const uint8_t *input, size_t input_count, uint8_t *output, size_t output_count,
                   size_t *consumed, size_t *produced) {
    return run(zlib.inflate, stream, input, input_count, output, output_count, ERRAND_Z_SYNC_FLUSH, consumed,
               produced);
}

int errand_deflate(void *stream, const uint8_t *input, size_t input_count, uint8_t *output, size_t output_count,
                   int flush, size_t *consumed, size_t *produced) {
    return run(zlib.deflate, stream, input, input_count, output, output_count, flush, consumed, produced);
}
