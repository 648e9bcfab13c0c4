// Raw deflate streams (RFC 1951) for WebSocket's permessage-deflate, from the system's zlib,
// loaded at run time with dlopen as CErrandCurl loads libcurl: building needs no development
// package. zlib's z_stream stays inside the C side; Swift holds an opaque pointer.
#ifndef CERRANDZLIB_H
#define CERRANDZLIB_H

#include <stddef.h>
#include <stdint.h>

#define ERRAND_Z_OK 0
#define ERRAND_Z_STREAM_END 1
#define ERRAND_Z_BUF_ERROR (-5)
#define ERRAND_Z_NO_FLUSH 0
#define ERRAND_Z_SYNC_FLUSH 2

/// 1 when zlib was found and has every function used; loads it on the first call.
int errand_zlib_load(void);

/// A raw inflate stream with a window of 2^window_bits bytes (8–15); NULL without zlib or memory.
void *errand_inflater_create(int window_bits);
/// A raw deflate stream with a window of 2^window_bits bytes (9–15); `huffman_only` finds no
/// matches, so its output suits a peer with any window.
void *errand_deflater_create(int window_bits, int huffman_only);
void errand_inflater_destroy(void *stream);
void errand_deflater_destroy(void *stream);
int errand_inflater_reset(void *stream);
int errand_deflater_reset(void *stream);

/// Runs the stream over `input` into `output` (with `flush` for deflate); `consumed` and
/// `produced` say how far each got. Returns zlib's code: Z_OK, Z_STREAM_END, Z_BUF_ERROR when
/// no progress was possible, or a negative error.
int errand_inflate(void *stream, const uint8_t *input, size_t input_count, uint8_t *output, size_t output_count,
                   size_t *consumed, size_t *produced);
int errand_deflate(void *stream, const uint8_t *input, size_t input_count, uint8_t *output, size_t output_count,
                   int flush, size_t *consumed, size_t *produced);

#endif
