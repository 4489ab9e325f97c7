/*
 * verdictpack.stimuli._textkernel -- the compiled text kernel of the real-text gates.
 *
 * The gates' rules are written in Python (verdictpack.stimuli._realtext and _gates: the word
 * tokens and sentence openings, the content units, the sentence n-gram similarity, the
 * difflib-equivalent token difference, the lengths in words); that code is the specification,
 * and tests/stimuli/test_textkernel.py holds this file equal to it on seeded random texts
 * (Unicode letters, apostrophes, hyphens, numbers with ',' and '.', sentence punctuation,
 * quotes) and on every code point. This file computes the same quantities in one pass over
 * each text, on integer ids:
 *
 *   - a text is read as code points and a token is a span of them. The character classes are
 *     the `re` module's for str patterns: \d = Py_UNICODE_ISDECIMAL, \w = Py_UNICODE_ISALNUM or
 *     '_' (so [^\W\d_], a letter, = alphanumeric and not decimal), \s = Py_UNICODE_ISSPACE; the
 *     tests of str methods (isdigit, isupper) are Py_UNICODE_ISDIGIT / Py_UNICODE_ISUPPER;
 *   - within one call equal strings get equal ids: a hash table over the code points, every hit
 *     compared in full, so a hash collision can never merge two strings;
 *   - where the rules lower-case, a string with a non-ASCII character is lower-cased by
 *     str.lower itself (called through Python: full case mappings, final sigma), an ASCII one
 *     by A-Z -> a-z;
 *   - the stop words and the not-a-name words arrive as frozensets of str and are copied once
 *     into tables of their own, kept by identity (a frozenset never changes; the table holds a
 *     reference, so the identity cannot be reused); any other kind of set makes the entry point
 *     return None and the caller apply the Python rules.
 *
 * Entry points (the rules: module docstrings of _realtext and _gates):
 *   overlap(ref, treatment, null, min_word_length, stop_words, not_names)
 *       -> (kept, total, numbers_intact) | None
 *   token_diff(a, b) -> the token difference of the two texts' word tokens
 *   fragment_similarity(text, n) -> the max Jaccard similarity of sentence n-gram sets
 *   word_count(text) -> (len(text.split()), len(" ".join(text.split())))
 * and, for the equality tests, the intermediate results as Python objects:
 *   word_tokens(text) -> (tokens, indices of the tokens opening a sentence)
 *   content_units(text, min_word_length, stop_words, not_names) -> (numbers, names, words) | None
 *   fragment_sentences(text) -> the token tuples of the fragment gate's sentences
 *
 * Scratch memory is kept between calls (one context, reset per call; a nested call, which only
 * a garbage-collector callback could make, gets a context of its own) and released when a call
 * needed more than a few megabytes.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static PyObject *str_lower; /* interned "lower" */

/* ------------------------------------------------------------------------------------------ */
/* growable arrays and hashing                                                                */
/* ------------------------------------------------------------------------------------------ */

static int grow(void **p, size_t *cap, size_t need, size_t esz) {
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = PyMem_Realloc(*p, c * esz);
    if (q == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *p = q;
    *cap = c;
    return 0;
}

#define GROW(arr, cap, need) grow((void **)&(arr), &(cap), (need), sizeof *(arr))

typedef struct {
    int32_t *p;
    size_t n, cap;
} I32s;

typedef struct {
    size_t *p;
    size_t n, cap;
} Sizes;

static inline int push_i32(I32s *v, int32_t x) {
    if (v->n == v->cap && GROW(v->p, v->cap, v->n + 1) < 0) return -1;
    v->p[v->n++] = x;
    return 0;
}

static inline int push_size(Sizes *v, size_t x) {
    if (v->n == v->cap && GROW(v->p, v->cap, v->n + 1) < 0) return -1;
    v->p[v->n++] = x;
    return 0;
}

/* FNV-1a over code points, finished by a multiply-xorshift mixer */
#define H0 0xcbf29ce484222325ULL
#define HSTEP(h, c) (((h) ^ (uint64_t)(c)) * 0x100000001b3ULL)

static inline uint64_t hfinish(uint64_t h, size_t n) {
    h ^= (uint64_t)n;
    h ^= h >> 31;
    h *= 0x9e3779b97f4a7c15ULL;
    return h ^ (h >> 29);
}

/* two code points a step (the mixer brings the high halves down) */
static inline uint64_t hash_cps(const Py_UCS4 *s, size_t n) {
    uint64_t h = H0;
    size_t i = 0;
    for (; i + 2 <= n; i += 2) h = HSTEP(h, (uint64_t)s[i] | ((uint64_t)s[i + 1] << 32));
    if (i < n) h = HSTEP(h, s[i]);
    return hfinish(h, n);
}

static inline uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

/* ------------------------------------------------------------------------------------------ */
/* character classes                                                                          */
/* ------------------------------------------------------------------------------------------ */

/* \d */
static inline int is_dec(Py_UCS4 c) { return c < 128 ? c - '0' < 10u : Py_UNICODE_ISDECIMAL(c); }

/* the word tokeniser's classes: C_DEC (\d), C_LET ([^\W\d_]), C_UP (ASCII upper case) */
enum { C_DEC = 1, C_LET = 2, C_UP = 4 };
static unsigned char ascii_cls[128];

static void init_classes(void) {
    for (int c = 0; c < 128; c++) {
        ascii_cls[c] = (c >= '0' && c <= '9')   ? C_DEC
                       : (c >= 'A' && c <= 'Z') ? C_LET | C_UP
                       : (c >= 'a' && c <= 'z') ? C_LET
                                                : 0;
    }
}

static inline int cls_of(Py_UCS4 c) {
    if (c < 128) return ascii_cls[c];
    return Py_UNICODE_ISDECIMAL(c) ? C_DEC : Py_UNICODE_ISALNUM(c) ? C_LET : 0;
}

/* [^\W\d_]: alphanumeric and not a decimal digit */
static inline int is_let(Py_UCS4 c) {
    if (c < 128) return (c | 32) - 'a' < 26u;
    return Py_UNICODE_ISALNUM(c) && !Py_UNICODE_ISDECIMAL(c);
}

/* \s, and str.split's white space */
static inline int is_space(Py_UCS4 c) {
    return c < 128 ? (c == ' ' || c - 9 < 5u || c - 28 < 4u) : Py_UNICODE_ISSPACE(c);
}

/* str.isdigit and str.isupper of one character */
static inline int is_digit(Py_UCS4 c) { return c < 128 ? c - '0' < 10u : Py_UNICODE_ISDIGIT(c); }
static inline int is_upper(Py_UCS4 c) { return c < 128 ? c - 'A' < 26u : Py_UNICODE_ISUPPER(c); }

/* a closing quote or bracket of a sentence end: ["'”’)\]] */
static inline int is_close(Py_UCS4 c) {
    return c == '"' || c == '\'' || c == 0x201D || c == 0x2019 || c == ')' || c == ']';
}

/* ------------------------------------------------------------------------------------------ */
/* texts                                                                                      */
/* ------------------------------------------------------------------------------------------ */

typedef struct {
    PyObject *obj; /* borrowed, for str.lower of a span */
    Py_UCS4 *cp;   /* the code points (a buffer kept between calls) */
    size_t cap;
    Py_ssize_t n;
    int ascii;
} Text;

static int text_load(Text *t, PyObject *obj) {
    if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "expected str, got %.80s", Py_TYPE(obj)->tp_name);
        return -1;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(obj) < 0) return -1;
#endif
    t->obj = obj;
    t->n = PyUnicode_GET_LENGTH(obj);
    t->ascii = PyUnicode_IS_ASCII(obj);
    if (GROW(t->cp, t->cap, (size_t)t->n + 1) < 0) return -1;
    return PyUnicode_AsUCS4(obj, t->cp, t->n + 1, 1) == NULL ? -1 : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* string ids: a hash table over code point strings, reset per call                           */
/* ------------------------------------------------------------------------------------------ */

typedef struct {
    uint64_t hash;
    size_t off; /* in pool */
    uint32_t len;
    uint32_t flags; /* per entry point */
    uint32_t cnt_t, cnt_n;
    int32_t low; /* the id of the lower-cased string, -1 until known */
} Entry;

typedef struct {
    uint32_t gen; /* the slot is in use when gen is the table's */
    int32_t id;
} Slot;

typedef struct {
    Py_UCS4 *pool;
    size_t plen, pcap;
    Entry *e;
    size_t ne, ecap;
    Slot *slot;
    size_t nslot; /* a power of two, or 0 */
    uint32_t gen;
} Ids;

static void ids_free(Ids *d) {
    PyMem_Free(d->pool);
    PyMem_Free(d->e);
    PyMem_Free(d->slot);
    memset(d, 0, sizeof *d);
}

static void ids_reset(Ids *d) {
    d->ne = 0;
    d->plen = 0;
    if (++d->gen == 0) {
        if (d->slot) memset(d->slot, 0, d->nslot * sizeof *d->slot);
        d->gen = 1;
    }
}

static int ids_rehash(Ids *d, size_t nslot) {
    Slot *s = PyMem_Calloc(nslot, sizeof *s);
    if (s == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    if (d->gen == 0) d->gen = 1;
    for (size_t k = 0; k < d->ne; k++) {
        size_t at = (size_t)d->e[k].hash & (nslot - 1);
        while (s[at].gen == d->gen) at = (at + 1) & (nslot - 1);
        s[at].gen = d->gen;
        s[at].id = (int32_t)k;
    }
    PyMem_Free(d->slot);
    d->slot = s;
    d->nslot = nslot;
    return 0;
}

static inline int cps_eq(const Py_UCS4 *a, const Py_UCS4 *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

/* the id of s[0:n] with hash h (-1: absent) */
static inline int32_t ids_find(const Ids *d, const Py_UCS4 *s, size_t n, uint64_t h) {
    if (d->nslot == 0) return -1;
    size_t at = (size_t)h & (d->nslot - 1);
    while (d->slot[at].gen == d->gen) {
        const Entry *e = &d->e[d->slot[at].id];
        if (e->hash == h && e->len == n && cps_eq(d->pool + e->off, s, n)) return d->slot[at].id;
        at = (at + 1) & (d->nslot - 1);
    }
    return -1;
}

/* the id of s[0:n] with hash h, added when new (-1 with an exception set) */
static int32_t ids_add(Ids *d, const Py_UCS4 *s, size_t n, uint64_t h) {
    int32_t k = ids_find(d, s, n, h);
    if (k >= 0) return k;
    if (d->ne >= INT32_MAX || n > UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "text too large for the text kernel");
        return -1;
    }
    if ((d->ne + 1) * 2 > d->nslot && ids_rehash(d, d->nslot ? d->nslot * 2 : 256) < 0) return -1;
    if (GROW(d->e, d->ecap, d->ne + 1) < 0 || GROW(d->pool, d->pcap, d->plen + n + 1) < 0)
        return -1;
    memcpy(d->pool + d->plen, s, n * sizeof *s);
    Entry *e = &d->e[d->ne];
    e->hash = h;
    e->off = d->plen;
    e->len = (uint32_t)n;
    e->flags = 0;
    e->cnt_t = e->cnt_n = 0;
    e->low = -1;
    d->plen += n;
    k = (int32_t)d->ne++;
    size_t at = (size_t)h & (d->nslot - 1);
    while (d->slot[at].gen == d->gen) at = (at + 1) & (d->nslot - 1);
    d->slot[at].gen = d->gen;
    d->slot[at].id = k;
    return k;
}

static PyObject *ids_str(const Ids *d, int32_t k) {
    const Entry *e = &d->e[k];
    return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, d->pool + e->off, e->len);
}

/* ------------------------------------------------------------------------------------------ */
/* 64-bit keys -> ids (the n-grams), reset per call                                           */
/* ------------------------------------------------------------------------------------------ */

typedef struct {
    uint64_t key;
    uint32_t gen;
    int32_t id;
} KSlot;

typedef struct {
    KSlot *slot;
    size_t nslot, ne;
    uint32_t gen;
} Keys;

static void keys_reset(Keys *t) {
    t->ne = 0;
    if (++t->gen == 0) {
        if (t->slot) memset(t->slot, 0, t->nslot * sizeof *t->slot);
        t->gen = 1;
    }
}

static int32_t keys_add(Keys *t, uint64_t key) {
    uint64_t h = mix64(key);
    if (t->nslot) {
        size_t at = (size_t)h & (t->nslot - 1);
        while (t->slot[at].gen == t->gen) {
            if (t->slot[at].key == key) return t->slot[at].id;
            at = (at + 1) & (t->nslot - 1);
        }
    }
    if (t->ne >= INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "text too large for the text kernel");
        return -1;
    }
    if ((t->ne + 1) * 2 > t->nslot) {
        size_t ns = t->nslot ? t->nslot * 2 : 512;
        KSlot *s = PyMem_Calloc(ns, sizeof *s);
        if (s == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        if (t->gen == 0) t->gen = 1;
        for (size_t i = 0; i < t->nslot; i++) {
            if (t->slot[i].gen != t->gen) continue;
            size_t at = (size_t)mix64(t->slot[i].key) & (ns - 1);
            while (s[at].gen == t->gen) at = (at + 1) & (ns - 1);
            s[at] = t->slot[i];
        }
        PyMem_Free(t->slot);
        t->slot = s;
        t->nslot = ns;
    }
    size_t at = (size_t)h & (t->nslot - 1);
    while (t->slot[at].gen == t->gen) at = (at + 1) & (t->nslot - 1);
    t->slot[at].key = key;
    t->slot[at].gen = t->gen;
    t->slot[at].id = (int32_t)t->ne;
    return (int32_t)t->ne++;
}

/* ------------------------------------------------------------------------------------------ */
/* word sets (stop words, not-names): copied once per frozenset, kept by identity             */
/* ------------------------------------------------------------------------------------------ */

#define N_WORDSETS 8

static struct {
    PyObject *key; /* a strong reference: the identity cannot be reused while cached */
    Ids set;
    int ok; /* 0: not a frozenset of exact str (the caller uses the Python rules) */
} wordsets[N_WORDSETS];
static int wordsets_next;

/* 1: *out is the set's table; 0: a set the kernel does not take; -1: error */
static int wordset(PyObject *obj, const Ids **out) {
    for (int i = 0; i < N_WORDSETS; i++) {
        if (wordsets[i].key == obj) {
            *out = &wordsets[i].set;
            return wordsets[i].ok;
        }
    }
    Ids set;
    memset(&set, 0, sizeof set);
    ids_reset(&set);
    int ok = PyFrozenSet_CheckExact(obj);
    if (ok) {
        PyObject *it = PyObject_GetIter(obj), *key;
        if (it == NULL) return -1;
        while ((key = PyIter_Next(it)) != NULL) {
            if (!PyUnicode_CheckExact(key)) {
                Py_DECREF(key);
                ok = 0;
                break;
            }
            Py_UCS4 *cp = PyUnicode_AsUCS4Copy(key);
            size_t n = (size_t)PyUnicode_GET_LENGTH(key);
            int32_t k = cp == NULL ? -1 : ids_add(&set, cp, n, hash_cps(cp, n));
            PyMem_Free(cp);
            Py_DECREF(key);
            if (k < 0) {
                Py_DECREF(it);
                ids_free(&set);
                return -1;
            }
        }
        Py_DECREF(it);
        if (PyErr_Occurred()) {
            ids_free(&set);
            return -1;
        }
    }
    int slot = wordsets_next;
    wordsets_next = (wordsets_next + 1) % N_WORDSETS;
    Py_XDECREF(wordsets[slot].key);
    ids_free(&wordsets[slot].set);
    Py_INCREF(obj);
    wordsets[slot].key = obj;
    wordsets[slot].set = set;
    wordsets[slot].ok = ok;
    *out = &wordsets[slot].set;
    return ok;
}

static int wordsets_of(PyObject *stop_obj, PyObject *nn_obj, const Ids **stop, const Ids **nn) {
    int a = wordset(stop_obj, stop);
    if (a <= 0) return a;
    return wordset(nn_obj, nn);
}

/* ------------------------------------------------------------------------------------------ */
/* the scratch context                                                                        */
/* ------------------------------------------------------------------------------------------ */

typedef struct {
    Py_ssize_t s, e;
    uint64_t h;     /* hash of the token */
    int opens;      /* opens a sentence */
    int kind;       /* 0: ASCII, no upper case (its own lower case); 1: ASCII; 2: other */
} Tok;

typedef struct {
    Tok *t;
    size_t n, cap;
} Toks;

typedef struct {
    Py_ssize_t i, j, size;
} Block;

typedef struct {
    int busy;
    Text tx[3];
    Ids ids;
    Toks toks[3];
    Py_UCS4 *buf; /* one lower-cased token */
    size_t cbuf;
    I32s ref_ids, words, nums, seq[2];
    /* the token difference */
    Py_ssize_t *first, *pos, *len2, *queue;
    size_t cfirst, cpos, clen2, cqueue;
    uint64_t *stamp;
    size_t cstamp;
    uint64_t row; /* stamps only grow, so no reset is needed */
    Block *blocks;
    size_t cblocks;
    /* the fragment gate */
    I32s ftok;
    Sizes sent, goff, seen;
    I32s gid;
    uint32_t *shared;
    size_t cshared;
    Keys grams;
} Ctx;

static Ctx shared_ctx;

static void ctx_free(Ctx *c) {
    for (int k = 0; k < 3; k++) {
        PyMem_Free(c->tx[k].cp);
        PyMem_Free(c->toks[k].t);
    }
    ids_free(&c->ids);
    PyMem_Free(c->buf);
    PyMem_Free(c->ref_ids.p);
    PyMem_Free(c->words.p);
    PyMem_Free(c->nums.p);
    PyMem_Free(c->seq[0].p);
    PyMem_Free(c->seq[1].p);
    PyMem_Free(c->first);
    PyMem_Free(c->pos);
    PyMem_Free(c->len2);
    PyMem_Free(c->queue);
    PyMem_Free(c->stamp);
    PyMem_Free(c->blocks);
    PyMem_Free(c->ftok.p);
    PyMem_Free(c->sent.p);
    PyMem_Free(c->goff.p);
    PyMem_Free(c->seen.p);
    PyMem_Free(c->gid.p);
    PyMem_Free(c->shared);
    PyMem_Free(c->grams.slot);
    memset(c, 0, sizeof *c);
}

static Ctx *ctx_acquire(void) {
    Ctx *c = &shared_ctx;
    if (c->busy) {
        c = PyMem_Calloc(1, sizeof *c);
        if (c == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
    }
    c->busy = 1;
    ids_reset(&c->ids);
    keys_reset(&c->grams);
    c->ref_ids.n = c->words.n = c->nums.n = c->seq[0].n = c->seq[1].n = 0;
    c->ftok.n = c->sent.n = c->goff.n = c->seen.n = c->gid.n = 0;
    return c;
}

#define CTX_KEEP ((size_t)1 << 18) /* entries kept between calls */

static void ctx_release(Ctx *c) {
    if (c != &shared_ctx) {
        ctx_free(c);
        PyMem_Free(c);
        return;
    }
    c->busy = 0;
    if (c->ids.ecap > CTX_KEEP || c->ids.pcap > 8 * CTX_KEEP || c->grams.nslot > 4 * CTX_KEEP ||
        c->tx[0].cap > 8 * CTX_KEEP || c->tx[1].cap > 8 * CTX_KEEP || c->tx[2].cap > 8 * CTX_KEEP)
        ctx_free(c);
}

/* ------------------------------------------------------------------------------------------ */
/* the word tokens of _realtext (case kept) and the sentence openings                         */
/* ------------------------------------------------------------------------------------------ */

/* \d+(?:[.,]\d+)* | [^\W\d_]+(?:['’-][^\W\d_]+)*, scanned left to right as re.findall does;
 * a token opens a sentence when it is the first or a sentence end [.!?]["'”’)\]]*\s+ lies
 * between it and the previous token (_realtext splits the text there: no sentence end can
 * overlap a token, so the tokens are those of the whole text) */
static inline Py_ssize_t run_of(const Py_UCS4 *c, Py_ssize_t j, Py_ssize_t n, int cls) {
    while (j < n && (cls_of(c[j]) & cls)) j++;
    return j;
}

static int word_scan(const Text *x, Toks *out) {
    const Py_UCS4 *c = x->cp;
    Py_ssize_t n = x->n, i = 0;
    int opens = 1;
    out->n = 0;
    while (i < n) {
        Py_UCS4 ch = c[i];
        int k = cls_of(ch);
        if (!k) {
            if (ch == '.' || ch == '!' || ch == '?') {
                Py_ssize_t q = i + 1;
                while (q < n && is_close(c[q])) q++;
                if (q < n && is_space(c[q])) opens = 1;
            }
            i++;
            continue;
        }
        Py_ssize_t j;
        if (k & C_DEC) {
            j = run_of(c, i + 1, n, C_DEC);
            while (j + 1 < n && (c[j] == '.' || c[j] == ',') && (cls_of(c[j + 1]) & C_DEC))
                j = run_of(c, j + 2, n, C_DEC);
        } else {
            j = run_of(c, i + 1, n, C_LET);
            while (j + 1 < n && (c[j] == '\'' || c[j] == 0x2019 || c[j] == '-') &&
                   (cls_of(c[j + 1]) & C_LET))
                j = run_of(c, j + 2, n, C_LET);
        }
        if (out->n == out->cap && GROW(out->t, out->cap, out->n + 1) < 0) return -1;
        Tok *t = &out->t[out->n++];
        t->s = i;
        t->e = j;
        t->opens = opens;
        /* the hash, and whether the token is ASCII and has upper case (its kind) */
        const Py_UCS4 *p = c + i;
        size_t len = (size_t)(j - i), q = 0;
        uint64_t h = H0;
        Py_UCS4 any = 0;
        unsigned up = 0;
        for (; q + 2 <= len; q += 2) {
            any |= p[q] | p[q + 1];
            up |= (p[q] - 'A' < 26u) | (p[q + 1] - 'A' < 26u);
            h = HSTEP(h, (uint64_t)p[q] | ((uint64_t)p[q + 1] << 32));
        }
        if (q < len) {
            any |= p[q];
            up |= p[q] - 'A' < 26u;
            h = HSTEP(h, p[q]);
        }
        t->h = hfinish(h, len);
        t->kind = any >= 128 ? 2 : up ? 1 : 0;
        opens = 0;
        i = j;
    }
    return 0;
}

/* the id of a token, added when new */
static inline int32_t tok_id(Ctx *c, const Text *x, const Tok *t) {
    return ids_add(&c->ids, x->cp + t->s, (size_t)(t->e - t->s), t->h);
}

/* the id of str.lower of token t (whose id is id), computed once per distinct token */
static int32_t lower_id(Ctx *c, const Text *x, const Tok *t, int32_t id) {
    int32_t low = c->ids.e[id].low;
    if (low >= 0) return low;
    size_t n = (size_t)(t->e - t->s);
    if (t->kind == 0) {
        low = id;
    } else if (t->kind == 1) {
        if (GROW(c->buf, c->cbuf, n + 1) < 0) return -1;
        for (size_t i = 0; i < n; i++) {
            Py_UCS4 ch = x->cp[t->s + (Py_ssize_t)i];
            c->buf[i] = ch - 'A' < 26u ? ch + 32 : ch;
        }
        low = ids_add(&c->ids, c->buf, n, hash_cps(c->buf, n));
    } else {
        PyObject *sub = PyUnicode_Substring(x->obj, t->s, t->e);
        if (sub == NULL) return -1;
        PyObject *lo = PyObject_CallMethodNoArgs(sub, str_lower);
        Py_DECREF(sub);
        if (lo == NULL) return -1;
        Py_ssize_t m = PyUnicode_GET_LENGTH(lo);
        if (GROW(c->buf, c->cbuf, (size_t)m + 1) < 0 ||
            PyUnicode_AsUCS4(lo, c->buf, m + 1, 0) == NULL) {
            Py_DECREF(lo);
            return -1;
        }
        Py_DECREF(lo);
        low = ids_add(&c->ids, c->buf, (size_t)m, hash_cps(c->buf, (size_t)m));
    }
    if (low < 0) return -1;
    c->ids.e[id].low = low;
    return low;
}

/* ------------------------------------------------------------------------------------------ */
/* content units and the overlap gate's counts                                                */
/* ------------------------------------------------------------------------------------------ */

enum {
    R_SEEN = 1,       /* occurs in the reference (as written) */
    R_NUM = 2,        /* a number: the first character is a digit (str.isdigit) */
    R_NAMELIKE = 4,   /* starts upper-case and is not a short function word */
    R_OTHER = 8,      /* any other letter token */
    R_AT_START = 16,  /* occurs opening a sentence */
    R_OFF_START = 32, /* occurs elsewhere */
    W_WORD = 64,      /* (a lower-cased string) a content word of the reference */
    T_CASE = 128,     /* a token of the treatment, as written */
    N_CASE = 256,     /* a token of the null partner, as written */
    T_LOW = 512,      /* a lower-cased token of the treatment */
    N_LOW = 1024,     /* a lower-cased token of the null partner */
};

/* the reference's units: flags on its tokens' ids, the content words in c->words */
static int reference_units(
    Ctx *c, const Text *x, Toks *toks, size_t min_len, const Ids *stop, const Ids *not_names) {
    if (word_scan(x, toks) < 0) return -1;
    for (size_t k = 0; k < toks->n; k++) {
        const Tok *t = &toks->t[k];
        int32_t id = tok_id(c, x, t);
        if (id < 0) return -1;
        if (!(c->ids.e[id].flags & R_SEEN)) {
            Py_UCS4 first = x->cp[t->s];
            uint32_t cls;
            if (is_digit(first)) {
                cls = R_NUM;
            } else {
                int32_t low = lower_id(c, x, t, id);
                if (low < 0) return -1;
                const Entry *le = &c->ids.e[low];
                cls = is_upper(first) && ids_find(not_names, c->ids.pool + le->off, le->len,
                                                  le->hash) < 0
                          ? R_NAMELIKE
                          : R_OTHER;
            }
            c->ids.e[id].flags |= R_SEEN | cls;
            if (push_i32(&c->ref_ids, id) < 0) return -1;
        }
        c->ids.e[id].flags |= t->opens ? R_AT_START : R_OFF_START;
    }
    /* words: str.lower of (other | opening), long enough, not stop words, each string once */
    for (size_t k = 0; k < c->ref_ids.n; k++) {
        const Entry *e = &c->ids.e[c->ref_ids.p[k]];
        if (!((e->flags & R_OTHER) || ((e->flags & R_NAMELIKE) && (e->flags & R_AT_START))))
            continue;
        int32_t low = e->low;
        Entry *le = &c->ids.e[low];
        if (le->len < min_len || (le->flags & W_WORD) ||
            ids_find(stop, c->ids.pool + le->off, le->len, le->hash) >= 0)
            continue;
        le->flags |= W_WORD;
        if (push_i32(&c->words, low) < 0) return -1;
    }
    return 0;
}

/* mark a text's tokens (as written and lower-cased), count its numbers, keep its id sequence */
static int mark_text(Ctx *c, const Text *x, Toks *toks, uint32_t case_flag, uint32_t low_flag,
                     int side) {
    if (word_scan(x, toks) < 0) return -1;
    I32s *seq = &c->seq[side];
    seq->n = 0;
    if (GROW(seq->p, seq->cap, toks->n + 1) < 0) return -1;
    for (size_t k = 0; k < toks->n; k++) {
        const Tok *t = &toks->t[k];
        int32_t id = tok_id(c, x, t);
        if (id < 0) return -1;
        seq->p[seq->n++] = id;
        c->ids.e[id].flags |= case_flag;
        if (is_digit(x->cp[t->s])) {
            Entry *e = &c->ids.e[id];
            if (e->cnt_t == 0 && e->cnt_n == 0 && push_i32(&c->nums, id) < 0) return -1;
            if (side == 0)
                e->cnt_t++;
            else
                e->cnt_n++;
        }
        int32_t low = lower_id(c, x, t, id);
        if (low < 0) return -1;
        c->ids.e[low].flags |= low_flag;
    }
    return 0;
}

/* The last overlap call's treatment and null partner with their token id sequences: the diff
 * gate usually asks next for the same two texts (the same objects: a reference is held, so the
 * identity is the text's). */
static struct {
    PyObject *a, *b;
    I32s sa, sb;
    size_t nid;
} memo;

static int memo_set(PyObject *a, PyObject *b, const I32s *sa, const I32s *sb, size_t nid) {
    Py_CLEAR(memo.a);
    Py_CLEAR(memo.b);
    if (GROW(memo.sa.p, memo.sa.cap, sa->n + 1) < 0 || GROW(memo.sb.p, memo.sb.cap, sb->n + 1) < 0)
        return -1;
    memcpy(memo.sa.p, sa->p, sa->n * sizeof *sa->p);
    memcpy(memo.sb.p, sb->p, sb->n * sizeof *sb->p);
    memo.sa.n = sa->n;
    memo.sb.n = sb->n;
    memo.nid = nid;
    Py_INCREF(a);
    Py_INCREF(b);
    memo.a = a;
    memo.b = b;
    return 0;
}

static PyObject *py_overlap(PyObject *self, PyObject *args) {
    PyObject *ro, *to, *no, *stop_obj, *nn_obj;
    Py_ssize_t min_len;
    if (!PyArg_ParseTuple(args, "UUUnOO", &ro, &to, &no, &min_len, &stop_obj, &nn_obj))
        return NULL;
    const Ids *stop, *nn;
    int ok = wordsets_of(stop_obj, nn_obj, &stop, &nn);
    if (ok < 0) return NULL;
    if (ok == 0) Py_RETURN_NONE;
    if (min_len < 0) min_len = 0;
    Ctx *c = ctx_acquire();
    if (c == NULL) return NULL;
    PyObject *res = NULL;
    if (text_load(&c->tx[0], ro) < 0 || text_load(&c->tx[1], to) < 0 ||
        text_load(&c->tx[2], no) < 0)
        goto done;
    if (reference_units(c, &c->tx[0], &c->toks[0], (size_t)min_len, stop, nn) < 0 ||
        mark_text(c, &c->tx[1], &c->toks[1], T_CASE, T_LOW, 0) < 0 ||
        mark_text(c, &c->tx[2], &c->toks[2], N_CASE, N_LOW, 1) < 0)
        goto done;
    long kept = 0, total = (long)c->words.n;
    int intact = 1;
    for (size_t k = 0; k < c->ref_ids.n; k++) {
        const Entry *e = &c->ids.e[c->ref_ids.p[k]];
        int unit = (e->flags & R_NUM) || ((e->flags & R_NAMELIKE) && (e->flags & R_OFF_START));
        if (!unit) continue;
        total++;
        if ((e->flags & T_CASE) && (e->flags & N_CASE)) kept++;
        if ((e->flags & R_NUM) && e->cnt_t == 0) intact = 0;
    }
    for (size_t k = 0; k < c->words.n; k++) {
        const Entry *e = &c->ids.e[c->words.p[k]];
        if ((e->flags & T_LOW) && (e->flags & N_LOW)) kept++;
    }
    for (size_t k = 0; k < c->nums.n; k++) {
        const Entry *e = &c->ids.e[c->nums.p[k]];
        if (e->cnt_t != e->cnt_n) intact = 0;
    }
    if (memo_set(to, no, &c->seq[0], &c->seq[1], c->ids.ne) < 0) goto done;
    res = Py_BuildValue("llO", kept, total, intact ? Py_True : Py_False);
done:
    ctx_release(c);
    return res;
}

static PyObject *py_content_units(PyObject *self, PyObject *args) {
    PyObject *xo, *stop_obj, *nn_obj;
    Py_ssize_t min_len;
    if (!PyArg_ParseTuple(args, "UnOO", &xo, &min_len, &stop_obj, &nn_obj)) return NULL;
    const Ids *stop, *nn;
    int ok = wordsets_of(stop_obj, nn_obj, &stop, &nn);
    if (ok < 0) return NULL;
    if (ok == 0) Py_RETURN_NONE;
    if (min_len < 0) min_len = 0;
    Ctx *c = ctx_acquire();
    if (c == NULL) return NULL;
    PyObject *nums = NULL, *names = NULL, *words = NULL, *res = NULL;
    const Text *x = &c->tx[0];
    const Toks *toks = &c->toks[0];
    if (text_load(&c->tx[0], xo) < 0 ||
        reference_units(c, &c->tx[0], &c->toks[0], (size_t)min_len, stop, nn) < 0)
        goto done;
    for (size_t k = 0; k < toks->n; k++) { /* the numbers' counts over every occurrence */
        const Tok *t = &toks->t[k];
        int32_t id = ids_find(&c->ids, x->cp + t->s, (size_t)(t->e - t->s), t->h);
        if (c->ids.e[id].flags & R_NUM) c->ids.e[id].cnt_t++;
    }
    nums = PyDict_New();
    names = PyFrozenSet_New(NULL);
    words = PyFrozenSet_New(NULL);
    if (nums == NULL || names == NULL || words == NULL) goto done;
    for (size_t k = 0; k < c->ref_ids.n; k++) {
        const Entry *e = &c->ids.e[c->ref_ids.p[k]];
        int is_num = (e->flags & R_NUM) != 0;
        if (!is_num && !((e->flags & R_NAMELIKE) && (e->flags & R_OFF_START))) continue;
        PyObject *s = ids_str(&c->ids, c->ref_ids.p[k]);
        if (s == NULL) goto done;
        int err;
        if (is_num) {
            PyObject *n = PyLong_FromUnsignedLong(e->cnt_t);
            err = n == NULL || PyDict_SetItem(nums, s, n) < 0;
            Py_XDECREF(n);
        } else {
            err = PySet_Add(names, s) < 0;
        }
        Py_DECREF(s);
        if (err) goto done;
    }
    for (size_t k = 0; k < c->words.n; k++) {
        PyObject *s = ids_str(&c->ids, c->words.p[k]);
        if (s == NULL || PySet_Add(words, s) < 0) {
            Py_XDECREF(s);
            goto done;
        }
        Py_DECREF(s);
    }
    res = PyTuple_Pack(3, nums, names, words);
done:
    Py_XDECREF(nums);
    Py_XDECREF(names);
    Py_XDECREF(words);
    ctx_release(c);
    return res;
}

static PyObject *py_word_tokens(PyObject *self, PyObject *args) {
    PyObject *xo;
    if (!PyArg_ParseTuple(args, "U", &xo)) return NULL;
    Ctx *c = ctx_acquire();
    if (c == NULL) return NULL;
    PyObject *tt = NULL, *st = NULL, *res = NULL;
    Toks *toks = &c->toks[0];
    if (text_load(&c->tx[0], xo) < 0 || word_scan(&c->tx[0], toks) < 0) goto done;
    size_t nopen = 0;
    for (size_t k = 0; k < toks->n; k++) nopen += toks->t[k].opens != 0;
    tt = PyTuple_New((Py_ssize_t)toks->n);
    st = PyTuple_New((Py_ssize_t)nopen);
    if (tt == NULL || st == NULL) goto done;
    for (size_t k = 0, o = 0; k < toks->n; k++) {
        PyObject *s = PyUnicode_Substring(xo, toks->t[k].s, toks->t[k].e);
        if (s == NULL) goto done;
        PyTuple_SET_ITEM(tt, (Py_ssize_t)k, s);
        if (toks->t[k].opens) {
            PyObject *i = PyLong_FromSize_t(k);
            if (i == NULL) goto done;
            PyTuple_SET_ITEM(st, (Py_ssize_t)o++, i);
        }
    }
    res = PyTuple_Pack(2, tt, st);
done:
    Py_XDECREF(tt);
    Py_XDECREF(st);
    ctx_release(c);
    return res;
}

/* ------------------------------------------------------------------------------------------ */
/* the token difference: difflib.SequenceMatcher's matching blocks on ids (_matching_blocks)   */
/* ------------------------------------------------------------------------------------------ */

static int cmp_block(const void *p, const void *q) {
    const Block *a = p, *b = q;
    if (a->i != b->i) return a->i < b->i ? -1 : 1;
    return a->j < b->j ? -1 : (a->j > b->j);
}

static int push_part(Ctx *c, size_t *nq, Py_ssize_t alo, Py_ssize_t ahi, Py_ssize_t blo,
                     Py_ssize_t bhi) {
    if (GROW(c->queue, c->cqueue, *nq + 4) < 0) return -1;
    c->queue[(*nq)++] = alo;
    c->queue[(*nq)++] = ahi;
    c->queue[(*nq)++] = blo;
    c->queue[(*nq)++] = bhi;
    return 0;
}

/* sum over the gaps between the matching blocks of max(removed, inserted); -1 on error */
static Py_ssize_t id_difference(Ctx *c, const int32_t *a, Py_ssize_t la, const int32_t *b,
                                Py_ssize_t lb, size_t nid) {
    if (la == lb && (la == 0 || memcmp(a, b, (size_t)la * sizeof *a) == 0)) return 0;
    size_t w = (size_t)lb + 1;
    /* b2j as CSR: the positions of id x in b are pos[first[x] .. first[x + 1]], increasing */
    if (GROW(c->first, c->cfirst, nid + 2) < 0 || GROW(c->pos, c->cpos, w) < 0 ||
        GROW(c->len2, c->clen2, 2 * w) < 0)
        return -1;
    if (c->cstamp < 2 * w) {
        size_t old = c->cstamp;
        if (GROW(c->stamp, c->cstamp, 2 * w) < 0) return -1;
        memset(c->stamp + old, 0, (c->cstamp - old) * sizeof *c->stamp);
    }
    memset(c->first, 0, (nid + 2) * sizeof *c->first);
    for (Py_ssize_t j = 0; j < lb; j++) c->first[b[j] + 2]++;
    for (size_t k = 1; k <= nid; k++) c->first[k + 1] += c->first[k];
    for (Py_ssize_t j = 0; j < lb; j++) c->pos[c->first[b[j] + 1]++] = j;
    /* now first[x] .. first[x + 1] are x's positions */
    size_t nq = 0, nb = 0;
    if (push_part(c, &nq, 0, la, 0, lb) < 0) return -1;
    /* j2len of a row: len2[(row & 1) * w + j], valid where stamp is that row; rows only grow */
    if (c->row < 2) c->row = 2;
    while (nq) {
        nq -= 4;
        Py_ssize_t alo = c->queue[nq], ahi = c->queue[nq + 1];
        Py_ssize_t blo = c->queue[nq + 2], bhi = c->queue[nq + 3];
        Py_ssize_t besti = alo, bestj = blo, bestsize = 0;
        c->row++; /* an empty j2len for the first row of this part */
        for (Py_ssize_t i = alo; i < ahi; i++) {
            uint64_t row = ++c->row;
            Py_ssize_t *cur = c->len2 + (row & 1) * w;
            uint64_t *cst = c->stamp + (row & 1) * w;
            const Py_ssize_t *prev = c->len2 + ((row - 1) & 1) * w;
            const uint64_t *pst = c->stamp + ((row - 1) & 1) * w;
            int32_t x = a[i];
            for (Py_ssize_t q = c->first[x]; q < c->first[x + 1]; q++) {
                Py_ssize_t j = c->pos[q];
                if (j < blo) continue;
                if (j >= bhi) break;
                Py_ssize_t k = (j > 0 && pst[j - 1] == row - 1) ? prev[j - 1] + 1 : 1;
                cur[j] = k;
                cst[j] = row;
                if (k > bestsize) {
                    besti = i - k + 1;
                    bestj = j - k + 1;
                    bestsize = k;
                }
            }
        }
        if (bestsize) {
            if (GROW(c->blocks, c->cblocks, nb + 1) < 0) return -1;
            c->blocks[nb].i = besti;
            c->blocks[nb].j = bestj;
            c->blocks[nb].size = bestsize;
            nb++;
            if (alo < besti && blo < bestj && push_part(c, &nq, alo, besti, blo, bestj) < 0)
                return -1;
            if (besti + bestsize < ahi && bestj + bestsize < bhi &&
                push_part(c, &nq, besti + bestsize, ahi, bestj + bestsize, bhi) < 0)
                return -1;
        }
    }
    if (nb > 1) qsort(c->blocks, nb, sizeof *c->blocks, cmp_block);
    Py_ssize_t diff = 0, i = 0, j = 0;
    for (size_t k = 0; k < nb; k++) {
        Py_ssize_t di = c->blocks[k].i - i, dj = c->blocks[k].j - j;
        diff += di > dj ? di : dj;
        i = c->blocks[k].i + c->blocks[k].size;
        j = c->blocks[k].j + c->blocks[k].size;
    }
    Py_ssize_t di = la - i, dj = lb - j;
    return diff + (di > dj ? di : dj);
}

static int text_seq(Ctx *c, const Text *x, Toks *toks, I32s *seq) {
    if (word_scan(x, toks) < 0) return -1;
    seq->n = 0;
    if (GROW(seq->p, seq->cap, toks->n + 1) < 0) return -1;
    for (size_t k = 0; k < toks->n; k++) {
        int32_t id = tok_id(c, x, &toks->t[k]);
        if (id < 0) return -1;
        seq->p[seq->n++] = id;
    }
    return 0;
}

static PyObject *py_token_diff(PyObject *self, PyObject *args) {
    PyObject *ao, *bo;
    if (!PyArg_ParseTuple(args, "UU", &ao, &bo)) return NULL;
    Ctx *c = ctx_acquire();
    if (c == NULL) return NULL;
    PyObject *res = NULL;
    if (memo.a == ao && memo.b == bo) {
        Py_ssize_t d = id_difference(c, memo.sa.p, (Py_ssize_t)memo.sa.n, memo.sb.p,
                                     (Py_ssize_t)memo.sb.n, memo.nid);
        if (d >= 0) res = PyLong_FromSsize_t(d);
        goto done;
    }
    if (text_load(&c->tx[0], ao) < 0 || text_load(&c->tx[1], bo) < 0 ||
        text_seq(c, &c->tx[0], &c->toks[0], &c->seq[0]) < 0 ||
        text_seq(c, &c->tx[1], &c->toks[1], &c->seq[1]) < 0)
        goto done;
    Py_ssize_t d = id_difference(c, c->seq[0].p, (Py_ssize_t)c->seq[0].n, c->seq[1].p,
                                 (Py_ssize_t)c->seq[1].n, c->ids.ne);
    if (d >= 0) res = PyLong_FromSsize_t(d);
done:
    ctx_release(c);
    return res;
}

/* ------------------------------------------------------------------------------------------ */
/* the fragment gate: sentences of the lower-cased text, their n-gram sets, max Jaccard         */
/* ------------------------------------------------------------------------------------------ */

/* the text lower-cased splits at [.!?](?=\s|$); a sentence's tokens are the a-z/0-9 runs of its
 * piece; pieces without a token are dropped (_gates._sentence_grams). Sentence k's token ids
 * are c->ftok[c->sent[k] .. c->sent[k + 1]]. */
static int sentences_of(Ctx *c, PyObject *obj) {
    Text *x = &c->tx[0];
    if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "expected str, got %.80s", Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (PyUnicode_IS_ASCII(obj)) {
        if (text_load(x, obj) < 0) return -1;
        for (Py_ssize_t i = 0; i < x->n; i++)
            if (x->cp[i] - 'A' < 26u) x->cp[i] += 32;
    } else {
        PyObject *low = PyObject_CallMethodNoArgs(obj, str_lower);
        if (low == NULL) return -1;
        int err = text_load(x, low);
        Py_DECREF(low);
        x->obj = NULL;
        if (err < 0) return -1;
    }
    const Py_UCS4 *cp = x->cp;
    Py_ssize_t n = x->n, i = 0;
    if (push_size(&c->sent, 0) < 0) return -1;
    while (i < n) {
        Py_UCS4 ch = cp[i];
        if (ch - 'a' < 26u || ch - '0' < 10u) {
            Py_ssize_t j = i + 1;
            while (j < n && (cp[j] - 'a' < 26u || cp[j] - '0' < 10u)) j++;
            int32_t id = ids_add(&c->ids, cp + i, (size_t)(j - i), hash_cps(cp + i, (size_t)(j - i)));
            if (id < 0 || push_i32(&c->ftok, id) < 0) return -1;
            i = j;
            continue;
        }
        if ((ch == '.' || ch == '!' || ch == '?') && (i + 1 == n || is_space(cp[i + 1])) &&
            c->ftok.n > c->sent.p[c->sent.n - 1] && push_size(&c->sent, c->ftok.n) < 0)
            return -1;
        i++;
    }
    if (c->ftok.n > c->sent.p[c->sent.n - 1] && push_size(&c->sent, c->ftok.n) < 0) return -1;
    return 0;
}

/* the id of the gram of sentence tokens t[0:w] */
static int32_t gram_id(Ctx *c, const int32_t *t, size_t w, int packed) {
    if (packed) { /* w <= 3 ids below 2^20, with w itself: one key */
        uint64_t key = (uint64_t)w << 60;
        for (size_t r = 0; r < w; r++) key |= (uint64_t)(uint32_t)t[r] << (40 - 20 * r);
        return keys_add(&c->grams, key);
    }
    /* a chain: the gram of t[0:r+1] is the key (gram of t[0:r], t[r]); 0xFFFFFFFF = nothing */
    uint32_t p = 0xFFFFFFFFu;
    for (size_t r = 0; r < w; r++) {
        int32_t id = keys_add(&c->grams, ((uint64_t)p << 32) | (uint32_t)t[r]);
        if (id < 0) return -1;
        p = (uint32_t)id;
    }
    return (int32_t)p;
}

/* max over pairs of sentences of |Gi & Gj| / |Gi | Gj| (0.0 with fewer than two sentences or no
 * gram shared); -1.0 on error */
static double max_similarity(Ctx *c, size_t n) {
    size_t ns = c->sent.n - 1;
    if (ns < 2) return 0.0;
    int packed = n <= 3 && c->ids.ne < ((size_t)1 << 20);
    /* gid[goff[k] .. goff[k + 1]]: sentence k's distinct grams; seen[g]: 1 + the last sentence
     * holding gram g; shared[g]: how many sentences hold it */
    for (size_t k = 0; k < ns; k++) {
        if (push_size(&c->goff, c->gid.n) < 0) return -1.0;
        const int32_t *t = c->ftok.p + c->sent.p[k];
        size_t m = c->sent.p[k + 1] - c->sent.p[k];
        size_t count = m < n ? 1 : m - n + 1, width = m < n ? m : n;
        for (size_t q = 0; q < count; q++) {
            int32_t g = gram_id(c, t + q, width, packed);
            if (g < 0) return -1.0;
            size_t ng = c->grams.ne;
            if (c->seen.n < ng) {
                size_t old = c->seen.n;
                if (GROW(c->seen.p, c->seen.cap, ng) < 0 || GROW(c->shared, c->cshared, ng) < 0)
                    return -1.0;
                memset(c->seen.p + old, 0, (ng - old) * sizeof *c->seen.p);
                memset(c->shared + old, 0, (ng - old) * sizeof *c->shared);
                c->seen.n = ng;
            }
            if (c->seen.p[g] == k + 1) continue;
            c->seen.p[g] = k + 1;
            c->shared[g]++;
            if (push_i32(&c->gid, g) < 0) return -1.0;
        }
    }
    if (push_size(&c->goff, c->gid.n) < 0) return -1.0;
    const int32_t *gid = c->gid.p;
    const size_t *goff = c->goff.p;
    size_t *seen = c->seen.p;
    int any = 0;
    for (size_t q = 0; q < c->gid.n && !any; q++) any = c->shared[gid[q]] > 1;
    if (!any) return 0.0;
    double best = 0.0;
    for (size_t i = 0; i + 1 < ns; i++) {
        int has_shared = 0;
        size_t mark = 1 + ns + i; /* above every value of the first pass */
        for (size_t q = goff[i]; q < goff[i + 1]; q++) {
            seen[gid[q]] = mark;
            has_shared |= c->shared[gid[q]] > 1;
        }
        if (!has_shared) continue;
        size_t li = goff[i + 1] - goff[i];
        for (size_t j = i + 1; j < ns; j++) {
            size_t inter = 0;
            for (size_t q = goff[j]; q < goff[j + 1]; q++) inter += seen[gid[q]] == mark;
            if (inter) {
                double x = (double)inter / (double)(li + goff[j + 1] - goff[j] - inter);
                if (x > best) best = x;
            }
        }
    }
    return best;
}

/* whether an ASCII text has two sentences with a token (the rule of sentences_of; a-z after
 * lower-casing is A-Z or a-z before) */
static int ascii_two_sentences(PyObject *obj) {
    const Py_UCS1 *s = PyUnicode_1BYTE_DATA(obj);
    Py_ssize_t n = PyUnicode_GET_LENGTH(obj);
    int count = 0, has = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS1 ch = s[i];
        if (ascii_cls[ch] & (C_DEC | C_LET)) {
            has = 1;
        } else if ((ch == '.' || ch == '!' || ch == '?') && (i + 1 == n || is_space(s[i + 1]))) {
            count += has;
            has = 0;
            if (count == 2) return 1;
        }
    }
    return count + has >= 2;
}

static PyObject *py_fragment_similarity(PyObject *self, PyObject *args) {
    PyObject *xo;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "Un", &xo, &n)) return NULL;
    if (n < 1) {
        PyErr_SetString(PyExc_ValueError, "n: expected an integer >= 1");
        return NULL;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(xo) < 0) return NULL;
#endif
    if (PyUnicode_IS_ASCII(xo) && !ascii_two_sentences(xo)) return PyFloat_FromDouble(0.0);
    Ctx *c = ctx_acquire();
    if (c == NULL) return NULL;
    PyObject *res = NULL;
    if (sentences_of(c, xo) == 0) {
        double best = max_similarity(c, (size_t)n);
        if (best >= 0) res = PyFloat_FromDouble(best);
    }
    ctx_release(c);
    return res;
}

static PyObject *py_fragment_sentences(PyObject *self, PyObject *args) {
    PyObject *xo;
    if (!PyArg_ParseTuple(args, "U", &xo)) return NULL;
    Ctx *c = ctx_acquire();
    if (c == NULL) return NULL;
    PyObject *res = NULL;
    if (sentences_of(c, xo) < 0) goto done;
    size_t ns = c->sent.n - 1;
    res = PyTuple_New((Py_ssize_t)ns);
    if (res == NULL) goto done;
    for (size_t k = 0; k < ns; k++) {
        size_t m = c->sent.p[k + 1] - c->sent.p[k];
        PyObject *t = PyTuple_New((Py_ssize_t)m);
        if (t == NULL) {
            Py_CLEAR(res);
            goto done;
        }
        PyTuple_SET_ITEM(res, (Py_ssize_t)k, t);
        for (size_t q = 0; q < m; q++) {
            PyObject *w = ids_str(&c->ids, c->ftok.p[c->sent.p[k] + q]);
            if (w == NULL) {
                Py_CLEAR(res);
                goto done;
            }
            PyTuple_SET_ITEM(t, (Py_ssize_t)q, w);
        }
    }
done:
    ctx_release(c);
    return res;
}

/* ------------------------------------------------------------------------------------------ */
/* the length gate's lengths                                                                  */
/* ------------------------------------------------------------------------------------------ */

static PyObject *py_word_count(PyObject *self, PyObject *args) {
    PyObject *xo;
    if (!PyArg_ParseTuple(args, "U", &xo)) return NULL;
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(xo) < 0) return NULL;
#endif
    int kind = PyUnicode_KIND(xo);
    const void *data = PyUnicode_DATA(xo);
    Py_ssize_t n = PyUnicode_GET_LENGTH(xo), words = 0, chars = 0;
    int in_word = 0;
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *s = data;
        for (Py_ssize_t i = 0; i < n; i++) {
            int sp = is_space(s[i]);
            words += !sp && !in_word;
            chars += !sp;
            in_word = !sp;
        }
    } else {
        for (Py_ssize_t i = 0; i < n; i++) {
            int sp = is_space(PyUnicode_READ(kind, data, i));
            words += !sp && !in_word;
            chars += !sp;
            in_word = !sp;
        }
    }
    return Py_BuildValue("nn", words, words ? chars + words - 1 : 0);
}

/* ------------------------------------------------------------------------------------------ */

static PyMethodDef methods[] = {
    {"overlap", py_overlap, METH_VARARGS,
     "overlap(ref, treatment, null, min_word_length, stop_words, not_names) -> (kept, total, "
     "numbers_intact) or None"},
    {"token_diff", py_token_diff, METH_VARARGS, "token_diff(a, b) -> the word-token difference"},
    {"fragment_similarity", py_fragment_similarity, METH_VARARGS,
     "fragment_similarity(text, n) -> max Jaccard of sentence n-gram sets"},
    {"word_count", py_word_count, METH_VARARGS,
     "word_count(text) -> (len(text.split()), len(' '.join(text.split())))"},
    {"word_tokens", py_word_tokens, METH_VARARGS, "word_tokens(text) -> (tokens, openings)"},
    {"content_units", py_content_units, METH_VARARGS,
     "content_units(text, min_word_length, stop_words, not_names) -> (numbers, names, words) or "
     "None"},
    {"fragment_sentences", py_fragment_sentences, METH_VARARGS,
     "fragment_sentences(text) -> the token tuples of the fragment gate's sentences"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "verdictpack.stimuli._textkernel",
    "The compiled text kernel of the real-text gates (private; see _realtext).",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__textkernel(void) {
    init_classes();
    str_lower = PyUnicode_InternFromString("lower");
    if (str_lower == NULL) return NULL;
    return PyModule_Create(&module);
}
