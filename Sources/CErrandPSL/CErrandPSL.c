#include "CErrandPSL.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

// libpsl's context is opaque; the list it holds is never changed after loading.
typedef struct psl_ctx_st psl_ctx_t;

static struct {
    psl_ctx_t *(*latest)(const char *);
    const psl_ctx_t *(*builtin)(void);
    int (*is_public_suffix)(const psl_ctx_t *, const char *);
} psl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const psl_ctx_t *context = NULL;

static void load(void) {
    static const char *const names[] = {"libpsl.so.5", "libpsl.so", "libpsl.5.dylib"};
    void *library = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !library; i++) {
        library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    }
    if (!library) return;
    *(void **)(&psl.is_public_suffix) = dlsym(library, "psl_is_public_suffix");
    *(void **)(&psl.latest) = dlsym(library, "psl_latest");
    *(void **)(&psl.builtin) = dlsym(library, "psl_builtin");
    if (!psl.is_public_suffix) return;
    // The newer of the list built in and the distribution's file (libpsl 0.16 and later).
    if (psl.latest) context = psl.latest(NULL);
    if (!context && psl.builtin) context = psl.builtin();
}

int errand_psl_load(void) {
    pthread_once(&load_once, load);
    return context != NULL;
}

int errand_psl_is_public_suffix(const char *domain) {
    if (!errand_psl_load()) return -1;
    return psl.is_public_suffix(context, domain) ? 1 : 0;
}
