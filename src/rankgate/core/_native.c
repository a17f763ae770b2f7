/* rankgate's native kernels, loaded with ctypes by rankgate.core.native (optional: every caller has a
 * numpy/Arrow path that gives the same numbers).
 *
 * rg_scan: a one-pass reader of TREC run and qrels text (rankgate.io.native_scan). It reads only
 * the fields rankgate keeps (query id, doc id, score or grade) and never builds the fields
 * trec_eval ignores. It does not hash the doc ids: they are hashed slice by slice where they are
 * used, by rg_string_hashes.
 * It takes only text it reads exactly as the Arrow path (rankgate.io.trec) does; anything
 * else (a byte outside printable ASCII, a lone carriage return, a malformed number, a short
 * line, ...) stops it with a reason code, and the caller reads the file the
 * general way, which also names the bad line. So a number from here is never different.
 *
 * rg_join: which run rows are judged (rankgate.evaluation.join), query by query: each query's
 * judgments go into a small hash table keyed by the doc ids' hashes, its run rows are looked up
 * in it, and every hash match is checked on the strings themselves (the answer never depends on
 * a hash).
 *
 * Plain C99, no Python API: ctypes releases the GIL while it runs, so windows of a file are
 * read on several threads.
 */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RG_OK 0
#define RG_BYTE 1        /* a byte outside printable ASCII and the whitespace trec_eval skips */
#define RG_FIELDS 2      /* too few fields (run), or not exactly four (qrels) */
#define RG_NUMBER 3      /* a score or grade not read here (inf, nan, hex, too large, ...) */
/* 4, an id longer than LONG_ID bytes, is no longer returned: the scanner stopped hashing in version 13 */
#define RG_CAPACITY 5    /* an output array is full (the caller sized it wrong) */
#define RG_LONE_CR 6     /* a carriage return not followed by a line feed (old Mac line end) */
#define RG_COMMENT 7     /* a qrels line whose first non-blank character is '#' after blanks */
#define RG_BIG_ENDIAN 8  /* the hash reads little-endian words */

#define LONG_ID 1024 /* rankgate.core.hashing._LONG */
#define MAX_NUMBER 64

static const uint64_t GOLDEN = 0x9E3779B97F4A7C15ULL;
static const uint64_t MIX = 0xFF51AFD7ED558CCDULL;

int rg_scan_version(void) { return 15; }


/* Whitespace inside a line, as trec_eval's isspace less the line ends. */
static inline int is_blank(uint8_t c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }

/* A byte allowed inside a field: printable ASCII. */
static inline int is_field_byte(uint8_t c) { return c > ' ' && c < 0x7f; }

static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

#if defined(__x86_64__) && LDBL_MANT_DIG == 64
/* x87 extended precision: a 64-bit significand holds every mantissa of up to 19 digits and every
 * power of ten up to 1e27 exactly, so mantissa * 10^power (or / 10^-power) is one IEEE operation,
 * rounded once to 64 bits. Rounding that to double's 53 bits gives the correctly rounded double
 * unless the 11 bits dropped are exactly a half (10000000000b): only then may the exact value lie
 * on the other side of the halfway point between two doubles (the first rounding moved it less
 * than half a unit of the 64-bit significand). Scores of 17 digits (Python's repr, numpy's
 * savetxt) take this path instead of strtod. */
static const long double POW10L[28] = {1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,
                                       1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L,
                                       1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};

static int extended_quotient(uint64_t mantissa, int64_t power, double *out) {
    uint16_t control;
    __asm__ volatile("fnstcw %0" : "=m"(control));
    if (((control >> 8) & 3) != 3) return 0; /* the x87 unit set to round to fewer than 64 bits */
    long double value = (long double)mantissa;
    value = power < 0 ? value / POW10L[-power] : value * POW10L[power];
    uint64_t significand;
    memcpy(&significand, &value, sizeof significand); /* the x87 format's low 8 bytes */
    if ((significand & 0x7FF) == 0x400) return 0;
    *out = (double)value; /* between 1e-27 and 1e46: a normal double, no second range to handle */
    return 1;
}
#else
static int extended_quotient(uint64_t mantissa, int64_t power, double *out) {
    (void)mantissa;
    (void)power;
    (void)out;
    return 0; /* strtod reads it */
}
#endif

/* A decimal score [+-]digits[.digits][(e|E)[+-]digits], correctly rounded (as Arrow's parser and C's
 * strtod): exact arithmetic when the digits fit in 53 bits and the power of ten is exact (one
 * IEEE operation, rounded once), else strtod on a copy. Returns RG_OK or RG_NUMBER. */
static int read_score(const uint8_t *p, int64_t n, double *out) {
    int64_t i = 0;
    int negative = 0;
    if (i < n && (p[i] == '+' || p[i] == '-')) negative = p[i++] == '-';
    uint64_t mantissa = 0;
    int digits = 0, significant = 0, any = 0;
    int64_t scale = 0; /* the power of ten the digits are multiplied by */
    for (; i < n && p[i] >= '0' && p[i] <= '9'; i++, any = 1) {
        if (significant < 19) {
            mantissa = mantissa * 10 + (uint64_t)(p[i] - '0');
            if (mantissa) significant++;
        } else {
            significant++;
            scale++;
        }
        digits++;
    }
    if (i < n && p[i] == '.') {
        for (i++; i < n && p[i] >= '0' && p[i] <= '9'; i++, any = 1) {
            if (significant < 19) {
                mantissa = mantissa * 10 + (uint64_t)(p[i] - '0');
                if (mantissa) significant++;
                scale--;
            } else {
                significant++;
            }
        }
    }
    if (!any) return RG_NUMBER;
    int64_t exponent = 0;
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        int exp_negative = 0, exp_any = 0;
        i++;
        if (i < n && (p[i] == '+' || p[i] == '-')) exp_negative = p[i++] == '-';
        for (; i < n && p[i] >= '0' && p[i] <= '9'; i++, exp_any = 1)
            if (exponent < 100000) exponent = exponent * 10 + (p[i] - '0');
        if (!exp_any) return RG_NUMBER;
        if (exp_negative) exponent = -exponent;
    }
    if (i != n) return RG_NUMBER;
    (void)digits;
    int64_t power = scale + exponent;
    if (significant <= 19 && mantissa <= (1ULL << 53) && power >= -22 && power <= 22) {
        double value = (double)mantissa;
        value = power < 0 ? value / POW10[-power] : value * POW10[power];
        *out = negative ? -value : value;
        return RG_OK;
    }
    if (mantissa == 0) {
        *out = negative ? -0.0 : 0.0;
        return RG_OK;
    }
    if (significant <= 19 && power >= -27 && power <= 27 && extended_quotient(mantissa, power, out)) {
        if (negative) *out = -*out;
        return RG_OK;
    }
    if (n >= MAX_NUMBER) return RG_NUMBER;
    char copy[MAX_NUMBER];
    memcpy(copy, p, (size_t)n);
    copy[n] = 0;
    char *end = NULL;
    double value = strtod(copy, &end);
    if (end != copy + n) return RG_NUMBER; /* a locale whose decimal point is not '.' */
    if (!(value - value == 0.0)) return RG_NUMBER; /* overflowed to an infinity */
    *out = value;
    return RG_OK;
}

/* A grade written as an integer ([+-]digits, optionally ".0..."), as trec_eval's atoi reads it. */
static int read_grade(const uint8_t *p, int64_t n, double *out) {
    int64_t i = 0;
    int negative = 0;
    if (i < n && (p[i] == '+' || p[i] == '-')) negative = p[i++] == '-';
    int64_t value = 0;
    int any = 0;
    for (; i < n && p[i] >= '0' && p[i] <= '9'; i++, any = 1) {
        if (value > (1LL << 53) / 10) return RG_NUMBER; /* too large to be exact: the Arrow path says so */
        value = value * 10 + (p[i] - '0');
    }
    if (!any || value > (1LL << 53)) return RG_NUMBER;
    if (i < n && p[i] == '.')
        for (i++; i < n && p[i] == '0'; i++) {
        }
    if (i != n) return RG_NUMBER;
    *out = negative ? -(double)value : (double)value;
    return RG_OK;
}

static inline int is_field(uint8_t c) { return (uint8_t)(c - 0x21) < 0x5e; } /* '!' to '~' */

static inline uint64_t load64(const uint8_t *p) {
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

/* rankgate.core.hashing._hash_words for one string, 8 bytes at a time (little-endian). With padded,
 * the last partial word is read whole and masked (the caller's buffer has 8 readable bytes past
 * every id); without, only the id's own bytes are read (an Arrow string of any origin). Callers pass
 * a constant, so each inlined copy keeps one branch. */
static inline uint64_t hash_id(const uint8_t *p, int64_t n, int padded) {
    uint64_t h = (uint64_t)n * GOLDEN;
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
        uint64_t m = (h ^ load64(p + j)) * MIX;
        h = m ^ (m >> 32);
    }
    if (j < n) {
        uint64_t w = 0;
        if (padded)
            w = load64(p + j) & ((1ULL << (8 * (n - j))) - 1);
        else
            memcpy(&w, p + j, (size_t)(n - j)); /* little-endian: the low bytes, the rest zero */
        uint64_t m = (h ^ w) * MIX;
        h = m ^ (m >> 32);
    }
    return h;
}

static inline uint64_t word_hash_padded(const uint8_t *p, int64_t n) { return hash_id(p, n, 1); }
static inline uint64_t word_hash(const uint8_t *p, int64_t n) { return hash_id(p, n, 0); }

/* rankgate.core.hashing.string_hashes of the n strings of one Arrow chunk (int32 offsets at its own
 * first row, into data). An id longer than LONG_ID bytes is hashed like the others here; the
 * caller hashes those another way (BLAKE2b). Returns how many there are (under 2**21: a chunk holds
 * under 2**31 bytes), or -1 on a big-endian machine (the hash reads little-endian words; nothing is
 * written). */
int rg_string_hashes(int64_t n, const int32_t *offsets, const uint8_t *data, uint64_t *out) {
    const uint16_t probe = 1;
    if (*(const uint8_t *)&probe != 1) return -1;
    int long_ids = 0;
    for (int64_t i = 0; i < n; i++) {
        const int64_t length = (int64_t)offsets[i + 1] - offsets[i];
        out[i] = word_hash(data + offsets[i], length);
        long_ids += length > LONG_ID;
    }
    return long_ids;
}

/* Copy n bytes a word at a time (ids are short: a call to memcpy, or gcc's "rep movs", costs more);
 * both sides have 8 bytes of room past n. */
static inline void copy_padded(uint8_t *to, const uint8_t *from, int64_t n) {
    for (int64_t j = 0; j < n; j += 8) memcpy(to + j, from + j, 8);
}

#if !defined(RG_PORTABLE) && (defined(__GNUC__) || defined(__clang__)) /* RG_PORTABLE: the plain C below */
/* The high bit of each byte of w (little-endian) that is not a field byte ('!' to '~'), exactly:
 * with the top bit masked off, a byte plus 0x5F reaches 0x80 only from 0x21 up, and plus 0x01 only
 * from 0x7F; neither sum carries into the next byte. */
static inline uint64_t stop_bytes(uint64_t w) {
    const uint64_t high = 0x8080808080808080ULL, t = w & 0x7F7F7F7F7F7F7F7FULL;
    const uint64_t field = ~w & (t + 0x5F5F5F5F5F5F5F5FULL) & ~(t + 0x0101010101010101ULL) & high;
    return ~field & high;
}

/* The first byte at or after i that is not a field byte, read 8 bytes at a time (qrels lines, and
 * run lines not read whole: about 9% quicker on qrels lines, not on run lines, where run_line does
 * better). A line ends in '\n' (not a field byte) and the buffer holds 8 readable bytes past it. */
static inline int64_t field_end(const uint8_t *buf, int64_t i) {
    for (;;) {
        uint64_t stop = stop_bytes(load64(buf + i));
        if (stop) return i + (__builtin_ctzll(stop) >> 3);
        i += 8;
    }
}
#else
static inline int64_t field_end(const uint8_t *buf, int64_t i) {
    while (is_field(buf[i])) i++;
    return i;
}
#endif

/* The next field of a line: skips blanks, then reads printable ASCII. Returns 1 with the field in
 * *start, *length; 0 at the line's end (buf[*at] is '\n' or '\r'); or an RG_ code (negated). */
static inline int next_field(const uint8_t *buf, int64_t *at, int64_t *start, int64_t *length) {
    int64_t i = *at;
    while (is_blank(buf[i])) i++;
    if (!is_field(buf[i])) {
        *at = i;
        return buf[i] == '\n' || buf[i] == '\r' ? 0 : -RG_BYTE;
    }
    int64_t s = i;
    i = field_end(buf, i);
    *start = s;
    *length = i - s;
    *at = i;
    return 1;
}

#if !defined(RG_PORTABLE) && defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
#include <emmintrin.h>
#define RG_WHOLE_LINES 1

/* Bit i of each mask: byte p[i] (i < 64) is a field byte ('!' to '~'), a blank, a line feed. */
static inline void classify_64(const uint8_t *p, uint64_t *field, uint64_t *blank, uint64_t *lf) {
    const __m128i space = _mm_set1_epi8(' '), tab = _mm_set1_epi8('\t'), vt = _mm_set1_epi8('\v');
    const __m128i ff = _mm_set1_epi8('\f'), nl = _mm_set1_epi8('\n');
    const __m128i low = _mm_set1_epi8(0x20), high = _mm_set1_epi8(0x7f);
    uint64_t f = 0, b = 0, l = 0;
    for (int k = 0; k < 4; k++) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(p + 16 * k));
        /* signed bytes: 0x80 to 0xFF are negative, so only '!' to '~' lie strictly between 0x20 and 0x7F */
        const __m128i is_field = _mm_and_si128(_mm_cmpgt_epi8(v, low), _mm_cmplt_epi8(v, high));
        const __m128i is_blank = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, space), _mm_cmpeq_epi8(v, tab)),
                                              _mm_or_si128(_mm_cmpeq_epi8(v, vt), _mm_cmpeq_epi8(v, ff)));
        f |= (uint64_t)(uint16_t)_mm_movemask_epi8(is_field) << (16 * k);
        b |= (uint64_t)(uint16_t)_mm_movemask_epi8(is_blank) << (16 * k);
        l |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)) << (16 * k);
    }
    *field = f, *blank = b, *lf = l;
}

/* A run line of up to 63 bytes and its line feed at buf + at (buf holds 64 bytes from at), read
 * whole from the masks of its bytes: its fields need no byte-by-byte walk, and the next line's
 * start is known after a few independent loads, where the walk made each field wait for the one
 * before it (5-10% quicker on base-like runs; runs only: on short qrels lines it gained nothing). Only a plain line is read here:
 * nothing but fields and blanks before a "\n" or "\r\n", no comment, six fields or more (the
 * rest are let be). Returns the next line's start, with *got 2 (a row, its kept fields in start
 * and length, as rg_scan's walk fills them) or 0 (a blank line); or -1: any other line, left to
 * the walk (which reads it, or names what is wrong). A byte taken for "other" only sends its line
 * to the walk: the masks cannot read a line the walk would not. */
static inline int64_t run_line(const uint8_t *buf, int64_t at, int64_t *start, int64_t *length, int *got) {
    uint64_t field, blank, lf;
    classify_64(buf + at, &field, &blank, &lf);
    if (!lf) return -1; /* 64 bytes or more */
    const int end = __builtin_ctzll(lf);
    const int content = end > 0 && buf[at + end - 1] == '\r' ? end - 1 : end; /* "\r\n" ends a line too */
    const uint64_t inside = (1ULL << content) - 1;
    if (((field | blank) & inside) != inside) return -1; /* another byte (a lone CR too): the walk names it */
    uint64_t fields = field & inside;
    uint64_t starts = fields & ~(fields << 1), lasts = fields & ~(fields >> 1);
    if (!starts) {
        *got = 0;
        return at + end + 1;
    }
    if (buf[at + __builtin_ctzll(starts)] == '#') return -1; /* a comment */
    int64_t s[6], n[6];
    for (int k = 0; k < 6; k++) { /* qid Q0 docid rank score tag */
        if (!starts) return -1; /* too few fields: the walk says so */
        const int first = __builtin_ctzll(starts), last = __builtin_ctzll(lasts);
        s[k] = at + first;
        n[k] = last - first + 1;
        starts &= starts - 1;
        lasts &= lasts - 1;
    }
    start[0] = s[0], length[0] = n[0];
    start[1] = s[2], length[1] = n[2];
    start[2] = s[4], length[2] = n[4];
    *got = 2;
    return at + end + 1;
}
#endif

/* The query ids of a window, each stored once: a row's code is its id's place in the window's
 * dictionary (ids in order of first appearance). An open-addressing table whose entries hold an
 * id's first 8 bytes and length beside its code, so that a lookup of an id of up to 8 bytes reads
 * one entry and nothing else (a shuffled run looks up every row's id in a table of thousands: with
 * the code alone in the slot, each lookup waited on three dependent reads, 50 ns a row more than a
 * run whose queries come together). Rows of the query before them skip the table. */
typedef struct {
    uint64_t head;   /* the id's first 8 bytes, zero-padded */
    int32_t length;  /* bytes */
    int32_t code;    /* code + 1; 0: empty */
} QueryEntry;

typedef struct {
    QueryEntry *entries;
    uint64_t *hashes; /* each code's hash */
    int64_t capacity; /* entries (a power of two); codes stay below half of it */
    int64_t codes;
    int32_t *offsets;
    uint8_t *bytes;
} Queries;

static inline uint64_t id_head(const uint8_t *p, int64_t n) { /* the padded buffer has 8 bytes past p + n */
    uint64_t w = load64(p);
    return n >= 8 ? w : w & ((1ULL << (8 * n)) - 1);
}

static int queries_grow(Queries *q) {
    int64_t capacity = q->capacity ? q->capacity * 2 : 1024;
    QueryEntry *entries = calloc((size_t)capacity, sizeof(QueryEntry));
    uint64_t *hashes = realloc(q->hashes, (size_t)(capacity / 2) * sizeof(uint64_t));
    if (!entries || !hashes) {
        free(entries);
        if (hashes) q->hashes = hashes;
        return RG_CAPACITY;
    }
    q->hashes = hashes;
    for (int64_t code = 0; code < q->codes; code++) {
        int64_t i = (int64_t)(hashes[code] & (uint64_t)(capacity - 1));
        while (entries[i].code) i = (i + 1) & (capacity - 1);
        const int32_t start = q->offsets[code], length = q->offsets[code + 1] - start;
        entries[i].head = id_head(q->bytes + start, length);
        entries[i].length = length;
        entries[i].code = (int32_t)(code + 1);
    }
    free(q->entries);
    q->entries = entries;
    q->capacity = capacity;
    return RG_OK;
}

/* The code of query id p[0, n), added to the dictionary when new (-1: out of memory). */
static int64_t queries_code(Queries *q, const uint8_t *p, int64_t n) {
    if (2 * (q->codes + 1) > q->capacity && queries_grow(q) != RG_OK) return -1;
    const uint64_t h = word_hash_padded(p, n), head = id_head(p, n);
    int64_t i = (int64_t)(h & (uint64_t)(q->capacity - 1));
    for (;;) {
        const QueryEntry *e = &q->entries[i];
        if (!e->code) break;
        if (e->head == head && e->length == n &&
            (n <= 8 || memcmp(q->bytes + q->offsets[e->code - 1] + 8, p + 8, (size_t)(n - 8)) == 0))
            return e->code - 1;
        i = (i + 1) & (q->capacity - 1);
    }
    int64_t code = q->codes++;
    q->entries[i] = (QueryEntry){head, (int32_t)n, (int32_t)(code + 1)};
    q->hashes[code] = h;
    copy_padded(q->bytes + q->offsets[code], p, n);
    q->offsets[code + 1] = q->offsets[code] + (int32_t)n;
    return code;
}

/* Scan complete lines in buf[0, n): buf[n - 1] is '\n', and buf holds 8 readable bytes past n.
 *
 * kind 0: a run line, "qid Q0 docid rank score tag [more fields]"; kind 1: a qrels line,
 * "qid iter docid grade". Blank lines are skipped, and comment lines: a run line whose first
 * non-blank byte is '#', a qrels line whose first byte is '#'. A line may end in "\r\n".
 *
 * Out, for rows r < counts[0] (at most max_rows):
 *   values[r]                 score or grade
 *   doc_offsets[r], [r + 1]   the doc id's bytes in doc_bytes (room for n + 8 bytes)
 *   query_codes[r]            the query id's code: its place in this window's query ids
 * and for codes c < counts[1]:
 *   query_offsets[c], [c + 1] the query id's bytes in query_bytes (room for n + 8 bytes)
 * counts: [rows, query ids, doc bytes, query id bytes, lines, where it stopped, lines read whole
 * (by run_line: what the tests look at to see that path taken)].
 */
int rg_scan(const uint8_t *buf, int64_t n, int kind, int64_t max_rows, double *values, int32_t *doc_offsets,
            uint8_t *doc_bytes, int32_t *query_codes, int32_t *query_offsets, uint8_t *query_bytes, int64_t *counts) {
    {
        const uint16_t probe = 1;
        uint8_t first;
        memcpy(&first, &probe, 1);
        if (first != 1) return RG_BIG_ENDIAN;
    }
    int64_t rows = 0, doc_len = 0, lines = 0, code = -1, whole = 0;
    Queries queries = {NULL, NULL, 0, 0, query_offsets, query_bytes};
    const uint8_t *last_qid = NULL;
    int64_t last_qid_len = -1;
    int64_t at = 0;
    int status = RG_OK;
    doc_offsets[0] = 0;
    query_offsets[0] = 0;
    if (n <= 0 || buf[n - 1] != '\n') {
        status = RG_CAPACITY;
        goto stop;
    }
    while (at < n) {
        int64_t line_start = at;
        int64_t start[4] = {0, 0, 0, 0}, length[4] = {0, 0, 0, 0};
        int64_t ignored_start, ignored_length;
        int got;
#ifdef RG_WHOLE_LINES
        if (kind == 0 && at + 64 <= n) {
            const int64_t next = run_line(buf, at, start, length, &got);
            if (next >= 0) {
                at = next;
                whole++;
                goto line_read;
            }
        }
#endif
        got = next_field(buf, &at, &start[0], &length[0]);
        if (got == 1 && buf[start[0]] == '#') {
            if (kind == 1 && start[0] != line_start) {
                status = RG_COMMENT;
                goto stop;
            }
            got = 0; /* a comment: any text up to the line's end */
            while (buf[at] != '\n') {
                if (buf[at] == '\r' && buf[at + 1] != '\n') {
                    status = RG_LONE_CR;
                    goto stop;
                }
                at++;
            }
        } else if (got == 1) {
            /* run: qid Q0 docid rank score tag; qrels: qid iter docid grade */
            int want = kind == 0 ? 6 : 4;
            for (int f = 1; f < want && got == 1; f++) {
                int64_t *s = f == 2 ? &start[1] : (f == want - 2 ? &start[2] : &ignored_start);
                int64_t *l = f == 2 ? &length[1] : (f == want - 2 ? &length[2] : &ignored_length);
                if (kind == 1 && f == 3) {
                    s = &start[2];
                    l = &length[2];
                }
                got = next_field(buf, &at, s, l);
            }
            if (got == 1) {
                got = 2; /* a whole row; a run line's later fields are ignored */
                while (got == 2) {
                    int more = next_field(buf, &at, &ignored_start, &ignored_length);
                    if (more < 0) {
                        status = -more;
                        goto stop;
                    }
                    if (more == 1 && kind == 1) {
                        status = RG_FIELDS;
                        goto stop;
                    }
                    if (more == 0) break;
                }
            } else if (got == 0) {
                status = RG_FIELDS;
                goto stop;
            }
        }
        if (got < 0) {
            status = -got;
            goto stop;
        }
        /* at: the line's end */
        if (buf[at] == '\r') {
            if (buf[at + 1] != '\n') {
                status = RG_LONE_CR;
                goto stop;
            }
            at++;
        }
        at++;
#ifdef RG_WHOLE_LINES
    line_read:
#endif
        lines++;
        if (got != 2) continue; /* blank or comment */
        if (rows >= max_rows) {
            status = RG_CAPACITY;
            goto stop;
        }
        int64_t qid_length = length[0], doc_length = length[1];
        double value;
        int read = kind == 0 ? read_score(buf + start[2], length[2], &value) : read_grade(buf + start[2], length[2], &value);
        if (read != RG_OK) {
            status = read;
            goto stop;
        }
        const uint8_t *qid = buf + start[0], *doc = buf + start[1];
        values[rows] = value;
        if (qid_length != last_qid_len || memcmp(qid, last_qid, (size_t)qid_length) != 0) {
            code = queries_code(&queries, qid, qid_length);
            if (code < 0) {
                status = RG_CAPACITY;
                goto stop;
            }
            last_qid = qid;
            last_qid_len = qid_length;
        }
        query_codes[rows] = (int32_t)code;
        copy_padded(doc_bytes + doc_len, doc, doc_length);
        doc_len += doc_length;
        rows++;
        doc_offsets[rows] = (int32_t)doc_len;
    }
stop:
    counts[0] = rows;
    counts[1] = queries.codes;
    counts[2] = doc_len;
    counts[3] = query_offsets[queries.codes];
    free(queries.entries);
    free(queries.hashes);
    counts[4] = lines;
    counts[5] = at;
    counts[6] = whole;
    return status;
}


/* ---- rg_join: the judged rows of a run, query by query ---------------------------------------- */

/* A column of strings held as Arrow chunks: chunk c holds rows [starts[c], starts[c + 1]), its
 * string i spanning data[c][offsets[c][i]] to data[c][offsets[c][i + 1]] (int32 offsets, already
 * moved to the chunk's own first row). */
typedef struct {
    int64_t chunks;
    const int64_t *starts;
    const int32_t *const *offsets;
    const uint8_t *const *data;
} Strings;

static inline const uint8_t *string_at(const Strings *s, int64_t row, int64_t *length) {
    int64_t lo = 0, hi = s->chunks - 1; /* the chunk holding row: starts[lo] <= row < starts[lo + 1] */
    while (lo < hi) {
        int64_t mid = (lo + hi + 1) / 2;
        if (s->starts[mid] <= row)
            lo = mid;
        else
            hi = mid - 1;
    }
    int64_t i = row - s->starts[lo];
    const int32_t *offsets = s->offsets[lo];
    *length = offsets[i + 1] - offsets[i];
    return s->data[lo] + offsets[i];
}

static inline int same_string(const Strings *a, int64_t row_a, const Strings *b, int64_t row_b) {
    int64_t na, nb;
    const uint8_t *pa = string_at(a, row_a, &na), *pb = string_at(b, row_b, &nb);
    return na == nb && memcmp(pa, pb, (size_t)na) == 0;
}

/* A hash word's slot in a table of 2**bits (the top bits of a multiplicative mix). */
static inline int64_t slot_of(uint32_t h, int bits) { return (int64_t)((uint32_t)(h * 0x9E3779B1u) >> (32 - bits)); }

/* For run queries [first, last): each run query q's rows [run_offsets[q], run_offsets[q + 1]) are
 * joined with the judgments of qrels query judged_query[q] (-1: none), rows
 * [qrels_offsets[j], qrels_offsets[j + 1]). run_high and qrels_high are the high 32 bits of each
 * row's doc-id hash (rankgate.core.hashing.high_words of string_hashes): equal ids, equal words.
 *
 * Out: the matching run rows (ascending) and their qrels rows, at most capacity of them; counts[0]
 * says how many. Returns RG_OK, or RG_CAPACITY (output or memory short: the caller's numpy path). */
int rg_join(int64_t first, int64_t last, const int64_t *run_offsets, const int32_t *judged_query,
            const int64_t *qrels_offsets, const uint32_t *run_high, const uint32_t *qrels_high,
            int64_t run_chunks, const int64_t *run_starts, const int32_t *const *run_offsets_of_chunk,
            const uint8_t *const *run_data, int64_t qrels_chunks, const int64_t *qrels_starts,
            const int32_t *const *qrels_offsets_of_chunk, const uint8_t *const *qrels_data, int64_t capacity,
            int32_t *out_run, int32_t *out_qrels, int64_t *counts) {
    const Strings run = {run_chunks, run_starts, run_offsets_of_chunk, run_data};
    const Strings qrels = {qrels_chunks, qrels_starts, qrels_offsets_of_chunk, qrels_data};
    int64_t widest = 0; /* the most judgments of one query: sizes the table once */
    for (int64_t q = first; q < last; q++) {
        int32_t j = judged_query[q];
        if (j >= 0 && qrels_offsets[j + 1] - qrels_offsets[j] > widest) widest = qrels_offsets[j + 1] - qrels_offsets[j];
    }
    int64_t size = 16;
    while (size < 2 * widest) size *= 2;
    int32_t *slots = calloc((size_t)size, sizeof(int32_t)); /* judgment's row - its query's first + 1; 0: empty */
    if (!slots) return RG_CAPACITY;
    int64_t found = 0;
    int status = RG_OK;
    for (int64_t q = first; q < last && status == RG_OK; q++) {
        int32_t j = judged_query[q];
        if (j < 0) continue;
        int64_t qa = qrels_offsets[j], qb = qrels_offsets[j + 1];
        if (qb == qa) continue;
        if (qb - qa > ((int64_t)1 << 30)) {
            status = RG_CAPACITY;
            break;
        }
        int bits = 4; /* a table at most half full */
        while (((int64_t)1 << bits) < 2 * (qb - qa)) bits++;
        const int64_t mask = ((int64_t)1 << bits) - 1;
        memset(slots, 0, (size_t)(mask + 1) * sizeof(int32_t));
        for (int64_t k = qa; k < qb; k++) {
            int64_t i = slot_of(qrels_high[k], bits);
            while (slots[i]) i = (i + 1) & mask;
            slots[i] = (int32_t)(k - qa + 1);
        }
        for (int64_t r = run_offsets[q]; r < run_offsets[q + 1]; r++) {
            uint32_t h = run_high[r];
            int64_t i = slot_of(h, bits);
            for (; slots[i]; i = (i + 1) & mask) {
                int64_t k = qa + slots[i] - 1;
                if (qrels_high[k] != h || !same_string(&run, r, &qrels, k)) continue;
                if (found >= capacity) {
                    status = RG_CAPACITY;
                    break;
                }
                out_run[found] = (int32_t)r;
                out_qrels[found] = (int32_t)k;
                found++;
                break; /* judgments are unique within a query */
            }
            if (status != RG_OK) break;
        }
    }
    free(slots);
    counts[0] = found;
    return status;
}

/* ---- rg_doc_scan: duplicates, own-id candidates and hash words of a run's rows ------------------- */

#define RG_SCATTERED 9 /* the rows' query codes are not ascending */

/* For rows [0, n) whose query codes ascend (each query's rows together), with each doc id's 64-bit
 * hash (rankgate.core.hashing.string_hashes) and each query id's:
 *   high[r]            the high 32 bits of hashes[r] (the words Run keeps for joins)
 *   self_rows          rows whose doc-id hash equals their query id's hash (may be the query's own id)
 *   later[i], first[i] a row whose doc-id hash equals that of an earlier row of its query, and the
 *                      first such row: candidate duplicates, for the caller to check on the strings
 * counts: [self rows, pairs]. Each output holds up to n entries. Returns RG_OK, RG_SCATTERED or
 * RG_CAPACITY (out of memory). */
int rg_doc_scan(int64_t n, const int32_t *codes, const uint64_t *hashes, const uint64_t *query_hashes, uint32_t *high,
                int64_t *self_rows, int64_t *later, int64_t *first, int64_t *counts) {
    int64_t widest = 0, selves = 0, pairs = 0;
    for (int64_t a = 0, b; a < n; a = b) {
        for (b = a + 1; b < n && codes[b] == codes[a]; b++) {
        }
        if (b < n && codes[b] < codes[a]) return RG_SCATTERED;
        if (b - a > widest) widest = b - a;
    }
    if (widest > ((int64_t)1 << 30)) return RG_CAPACITY;
    int bits = 4;
    while (((int64_t)1 << bits) < 2 * widest) bits++;
    int64_t *slots = malloc(((size_t)1 << bits) * sizeof(int64_t)); /* row + 1; 0: empty */
    if (!slots) return RG_CAPACITY;
    for (int64_t a = 0, b; a < n; a = b) {
        for (b = a + 1; b < n && codes[b] == codes[a]; b++) {
        }
        int group_bits = 4;
        while (((int64_t)1 << group_bits) < 2 * (b - a)) group_bits++;
        const uint64_t mask = ((uint64_t)1 << group_bits) - 1;
        memset(slots, 0, (size_t)(mask + 1) * sizeof(int64_t));
        const uint64_t own = query_hashes[codes[a]];
        for (int64_t r = a; r < b; r++) {
            const uint64_t h = hashes[r];
            high[r] = (uint32_t)(h >> 32);
            if (h == own) self_rows[selves++] = r;
            uint64_t i = (h * GOLDEN) >> (64 - group_bits);
            for (; slots[i]; i = (i + 1) & mask)
                if (hashes[slots[i] - 1] == h) break;
            if (slots[i]) {
                later[pairs] = r;
                first[pairs] = slots[i] - 1;
                pairs++;
            } else {
                slots[i] = r + 1;
            }
        }
    }
    free(slots);
    counts[0] = selves;
    counts[1] = pairs;
    return RG_OK;
}

/* ---- rg_tie_moves: trec_eval's order inside groups of equal scores ---------------------------- */

typedef struct {
    const uint8_t *bytes;
    int64_t length;
    int32_t row; /* the row's place in its group */
} Key;

/* Whether a's doc id comes before b's in trec_eval's order of tied rows: byte-wise descending. */
static inline int before(const Key *a, const Key *b) {
    int64_t n = a->length < b->length ? a->length : b->length;
    int c = memcmp(a->bytes, b->bytes, (size_t)n);
    return c != 0 ? c > 0 : a->length > b->length;
}

/* Sort keys[0, n) by `before` (doc ids are distinct within a query, so no two keys are equal):
 * insertion sort for short groups, else merge sort through spare[0, n). */
static void sort_keys(Key *keys, Key *spare, int64_t n) {
    if (n <= 16) {
        for (int64_t i = 1; i < n; i++) {
            Key k = keys[i];
            int64_t j = i;
            for (; j > 0 && before(&k, &keys[j - 1]); j--) keys[j] = keys[j - 1];
            keys[j] = k;
        }
        return;
    }
    int64_t half = n / 2;
    sort_keys(keys, spare, half);
    sort_keys(keys + half, spare, n - half);
    memcpy(spare, keys, (size_t)half * sizeof(Key));
    int64_t i = 0, j = half, k = 0;
    while (i < half && j < n) keys[k++] = before(&keys[j], &spare[i]) ? keys[j++] : spare[i++];
    while (i < half) keys[k++] = spare[i++];
}

/* The keys of rows [a, b) of `docs` (each its doc id and its place in the group), sorted by
 * `before`; *keys and *spare grown to at least b - a. Returns RG_OK or RG_CAPACITY. */
static int sorted_group(const Strings *docs, int64_t a, int64_t b, Key **keys, Key **spare, int64_t *capacity) {
    const int64_t size = b - a;
    if (size > *capacity) {
        const int64_t wanted = size > 2 * *capacity ? size : 2 * *capacity;
        Key *k = realloc(*keys, (size_t)wanted * sizeof(Key));
        if (k) *keys = k;
        Key *s = k ? realloc(*spare, (size_t)wanted * sizeof(Key)) : NULL;
        if (s) *spare = s;
        if (!k || !s) return RG_CAPACITY;
        *capacity = wanted;
    }
    for (int64_t r = a; r < b; r++) {
        (*keys)[r - a].bytes = string_at(docs, r, &(*keys)[r - a].length);
        (*keys)[r - a].row = (int32_t)(r - a);
    }
    sort_keys(*keys, *spare, size);
    return RG_OK;
}

/* Rows [lo, hi) of a run sorted by (query code, score descending), doc ids in `docs` (global rows):
 * every row in a group of equal (code, score) of two or more, ascending (rows[0, counts[0]), relative
 * to lo), and within[i], the place in rows of the row that trec_eval's order puts at rows[i] (doc
 * id descending, byte-wise). Each output holds up to hi - lo entries. Returns RG_OK or RG_CAPACITY
 * (out of memory). */
int rg_tie_moves(int64_t lo, int64_t hi, const int32_t *codes, const double *scores, int64_t doc_chunks,
                 const int64_t *doc_starts, const int32_t *const *doc_offsets, const uint8_t *const *doc_data,
                 int32_t *rows, int32_t *within, int64_t *counts) {
    const Strings docs = {doc_chunks, doc_starts, doc_offsets, doc_data};
    int64_t moved = 0, capacity = 0;
    Key *keys = NULL, *spare = NULL;
    int status = RG_OK;
    for (int64_t a = lo, b; a < hi; a = b) {
        for (b = a + 1; b < hi && codes[b] == codes[a] && scores[b] == scores[a]; b++) {
        }
        const int64_t size = b - a;
        if (size < 2) continue;
        if (sorted_group(&docs, a, b, &keys, &spare, &capacity) != RG_OK) {
            status = RG_CAPACITY;
            break;
        }
        for (int64_t r = a; r < b; r++) rows[moved + r - a] = (int32_t)(r - lo);
        for (int64_t i = 0; i < size; i++) within[moved + i] = (int32_t)(moved + keys[i].row);
        moved += size;
    }
    free(keys);
    free(spare);
    counts[0] = moved;
    return status;
}

/* rg_tie_ranks: where trec_eval's order puts a few rows, without ordering every tie group (an
 * evaluation asks only for the judged rows; with integer scores nearly every row is tied).
 * rows[lo, hi): ascending rows (int32) of a run of n rows sorted by (query code, score
 * descending), doc ids in `docs`, query q's rows from offsets[q]; out[i] = the 0-based rank
 * within its query at which the order puts rows[i]: its group's first row, plus the rows of its
 * group whose doc id comes before its own, less offsets[q] (done here, so that the caller needs
 * no full-size temporaries for it). A group asked for more than SORT_ABOVE times is sorted
 * instead of counted (counting costs the group's size per row asked). Returns RG_OK or
 * RG_CAPACITY (out of memory). */
#define SORT_ABOVE 16

int rg_tie_ranks(int64_t lo, int64_t hi, const int32_t *rows, int64_t n, const int32_t *codes, const double *scores,
                 const int64_t *offsets, int64_t doc_chunks, const int64_t *doc_starts, const int32_t *const *doc_offsets,
                 const uint8_t *const *doc_data, int64_t *out) {
    const Strings docs = {doc_chunks, doc_starts, doc_offsets, doc_data};
    Key *keys = NULL, *spare = NULL;
    int64_t capacity = 0;
    int status = RG_OK;
    for (int64_t i = lo, j; i < hi; i = j) {
        const int64_t r = rows[i];
        int64_t g0 = r, g1 = r + 1;
        while (g0 > 0 && codes[g0 - 1] == codes[r] && scores[g0 - 1] == scores[r]) g0--;
        while (g1 < n && codes[g1] == codes[r] && scores[g1] == scores[r]) g1++;
        const int64_t first = offsets[codes[r]]; /* the query's first row: ranks are within it */
        for (j = i + 1; j < hi && rows[j] < g1; j++) {
        }
        const int64_t size = g1 - g0;
        if (j - i <= SORT_ABOVE) {
            for (int64_t k = i; k < j; k++) {
                Key own, other;
                own.bytes = string_at(&docs, rows[k], &own.length);
                int64_t place = g0;
                for (int64_t x = g0; x < g1; x++) {
                    if (x == rows[k]) continue;
                    other.bytes = string_at(&docs, x, &other.length);
                    place += before(&other, &own);
                }
                out[k] = place - first;
            }
            continue;
        }
        if (sorted_group(&docs, g0, g1, &keys, &spare, &capacity) != RG_OK) {
            status = RG_CAPACITY;
            break;
        }
        int32_t *place = (int32_t *)spare; /* spare is free again: each row's place, by row */
        for (int64_t p = 0; p < size; p++) place[keys[p].row] = (int32_t)p;
        for (int64_t k = i; k < j; k++) out[k] = g0 + place[rows[k] - g0] - first;
    }
    free(keys);
    free(spare);
    return status;
}

/* ---- rg_sort_groups_descending: an ideal ranking's grades ------------------------------------- */

static int descending_int64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x < y) - (x > y);
}

/* Sort each group values[offsets[g], offsets[g + 1]) of int64 descending, in place (the grades of
 * each query's judgments, for the ideal ranking of nDCG and the like): insertion sort for short
 * groups; a counting sort when a longer group's values span at most COUNTED (grades are a few
 * small numbers: BEIR's 50 judgments a query cost an insertion sort ~600 moves each); else qsort.
 * Returns RG_OK. */
#define COUNTED 256

int rg_sort_groups_descending(int64_t groups, const int64_t *offsets, int64_t *values) {
    int64_t counts[COUNTED];
    for (int64_t g = 0; g < groups; g++) {
        int64_t *v = values + offsets[g], n = offsets[g + 1] - offsets[g];
        if (n > 16) {
            int64_t lo = v[0], hi = v[0];
            for (int64_t i = 1; i < n; i++) {
                if (v[i] < lo) lo = v[i];
                if (v[i] > hi) hi = v[i];
            }
            if ((uint64_t)hi - (uint64_t)lo < COUNTED) {
                int64_t span = hi - lo + 1, at = 0;
                memset(counts, 0, (size_t)span * sizeof(int64_t));
                for (int64_t i = 0; i < n; i++) counts[v[i] - lo]++;
                for (int64_t k = span - 1; k >= 0; k--)
                    for (int64_t c = counts[k]; c > 0; c--) v[at++] = lo + k;
            } else {
                qsort(v, (size_t)n, sizeof(int64_t), descending_int64);
            }
            continue;
        }
        for (int64_t i = 1; i < n; i++) {
            int64_t x = v[i], j = i;
            for (; j > 0 && v[j - 1] < x; j--) v[j] = v[j - 1];
            v[j] = x;
        }
    }
    return RG_OK;
}


/* ---- kernels for scattered runs: rows grouped by query and sorted by score, strings gathered ---- */

/* Each call works on its own range of rows (or of queries), so slices of a column run on a few
 * threads and the result does not depend on them.
 *
 * rg_take_string_lengths, rg_take_string_bytes: strings gathered by a row permutation into one
 * Arrow string array (rankgate.core.gather.take_rows). Their reads are random (rows in no order):
 * each loop asks for the memory of the row AHEAD rows on before it needs it, so many cache misses
 * wait at once instead of one after the other.
 *
 * rg_count_codes to rg_permute_strings: a shuffled run put in `Run`'s order (query code, then
 * score descending, file order among equal scores) without random reads (rankgate.core.scattered);
 * see "Grouping a shuffled run" below. */

#define RG_RANGE 10 /* a code or row outside its column */
#define AHEAD 16   /* rows read ahead */
#define RING 64    /* a power of two above 2 * AHEAD: what the rows ahead found */

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)0)
#endif

/* The chunk holding row: the last c with starts[c] <= row (no branch on the row: rows come in no
 * order, and a mispredicted branch would drop the reads in flight). */
static inline int64_t chunk_of(const Strings *s, int64_t row) {
    int64_t base = 0, length = s->chunks;
    while (length > 1) {
        int64_t half = length / 2;
        base = s->starts[base + half] <= row ? base + half : base;
        length -= half;
    }
    return base;
}

/* Where string row's two offsets are. */
static inline const int32_t *offsets_at(const Strings *s, int64_t row, int64_t *chunk) {
    *chunk = chunk_of(s, row);
    return s->offsets[*chunk] + (row - s->starts[*chunk]);
}

/* rg_take_string_lengths: the first of two passes gathering strings by rows into one Arrow string
 * array: out_offsets[i + 1] = the length of string rows[i], for i in [lo, hi); totals[0] = their
 * sum. Returns RG_OK, or RG_RANGE when a row is outside [0, starts[chunks]). */
int rg_take_string_lengths(int64_t lo, int64_t hi, const int32_t *rows, int64_t chunks, const int64_t *starts,
                           const int32_t *const *offsets, const uint8_t *const *data, int32_t *out_offsets,
                           int64_t *totals) {
    const Strings s = {chunks, starts, offsets, data};
    for (int64_t i = lo; i < hi; i++)
        if (rows[i] < 0 || rows[i] >= starts[chunks]) return RG_RANGE;
    const int32_t *found[RING];
    int64_t chunk, total = 0;
    for (int64_t j = lo; j < hi + AHEAD; j++) {
        if (j < hi) {
            found[j & (RING - 1)] = offsets_at(&s, rows[j], &chunk);
            PREFETCH(found[j & (RING - 1)]);
        }
        int64_t i = j - AHEAD;
        if (i >= lo) {
            const int32_t *at = found[i & (RING - 1)];
            out_offsets[i + 1] = at[1] - at[0];
            total += at[1] - at[0];
        }
    }
    totals[0] = total;
    return RG_OK;
}

/* rg_take_string_bytes: the second pass, for the rows [lo, hi) whose lengths the first pass wrote:
 * their strings copied to out_data from byte base on (the lengths of the rows before lo), and the
 * lengths turned into offsets. Two stages ahead: a row's offsets, then its bytes. */
int rg_take_string_bytes(int64_t lo, int64_t hi, const int32_t *rows, int64_t chunks, const int64_t *starts,
                         const int32_t *const *offsets, const uint8_t *const *data, int64_t base,
                         int32_t *out_offsets, uint8_t *out_data) {
    const Strings s = {chunks, starts, offsets, data};
    const int32_t *found[RING];
    int64_t chunk_of_row[RING];
    const uint8_t *bytes[RING];
    int64_t at = base;
    for (int64_t j = lo; j < hi + 2 * AHEAD; j++) {
        if (j < hi) {
            found[j & (RING - 1)] = offsets_at(&s, rows[j], &chunk_of_row[j & (RING - 1)]);
            PREFETCH(found[j & (RING - 1)]);
        }
        int64_t k = j - AHEAD;
        if (k >= lo && k < hi) {
            bytes[k & (RING - 1)] = data[chunk_of_row[k & (RING - 1)]] + found[k & (RING - 1)][0];
            PREFETCH(bytes[k & (RING - 1)]);
        }
        int64_t i = j - 2 * AHEAD;
        if (i >= lo) {
            int64_t length = out_offsets[i + 1];
            memcpy(out_data + at, bytes[i & (RING - 1)], (size_t)length);
            at += length;
            out_offsets[i + 1] = (int32_t)at;
        }
    }
    return RG_OK;
}

/* Blocks of rows moved whole, in a new order (a run whose queries come in numeric or topics-file
 * order: each query's rows stay together; rankgate.core.gather.take_blocks): for b in [lo, hi), rows
 * starts[b] .. starts[b] + lengths[b] - 1 go to the output from row at[b] on. Reads and writes are
 * sequential within a block, so no permutation is built and nothing is read ahead. */

/* rg_copy_blocks: fixed-size items of `item` bytes. */
int rg_copy_blocks(int64_t lo, int64_t hi, int64_t item, const int64_t *starts, const int64_t *lengths,
                   const int64_t *at, const uint8_t *from, uint8_t *to) {
    for (int64_t b = lo; b < hi; b++)
        memcpy(to + at[b] * item, from + starts[b] * item, (size_t)(lengths[b] * item));
    return RG_OK;
}

/* rg_block_string_bytes: the first of two passes for strings: totals[0] = the bytes of blocks
 * [lo, hi). A block may cross chunks. Returns RG_OK, or RG_RANGE for a block outside the column. */
int rg_block_string_bytes(int64_t lo, int64_t hi, const int64_t *block_starts, const int64_t *lengths, int64_t chunks,
                          const int64_t *starts, const int32_t *const *offsets, const uint8_t *const *data,
                          int64_t *totals) {
    const Strings s = {chunks, starts, offsets, data};
    int64_t total = 0, chunk;
    for (int64_t b = lo; b < hi; b++) {
        int64_t row = block_starts[b], end = row + lengths[b];
        if (row < 0 || lengths[b] < 0 || end > starts[chunks]) return RG_RANGE;
        while (row < end) {
            const int32_t *o = offsets_at(&s, row, &chunk);
            int64_t piece = (end < starts[chunk + 1] ? end : starts[chunk + 1]) - row;
            total += o[piece] - o[0];
            row += piece;
        }
    }
    totals[0] = total;
    return RG_OK;
}

/* rg_block_string_copy: the second pass: blocks [lo, hi) copied to out_data from byte base on and
 * to out_offsets from row at[lo] on (out_offsets[at[lo]] already written). */
int rg_block_string_copy(int64_t lo, int64_t hi, const int64_t *block_starts, const int64_t *lengths, const int64_t *at,
                         int64_t chunks, const int64_t *starts, const int32_t *const *offsets,
                         const uint8_t *const *data, int64_t base, int32_t *out_offsets, uint8_t *out_data) {
    const Strings s = {chunks, starts, offsets, data};
    int64_t chunk;
    for (int64_t b = lo; b < hi; b++) {
        int64_t row = block_starts[b], end = row + lengths[b], out = at[b];
        while (row < end) {
            const int32_t *o = offsets_at(&s, row, &chunk);
            int64_t piece = (end < starts[chunk + 1] ? end : starts[chunk + 1]) - row;
            memcpy(out_data + base, data[chunk] + o[0], (size_t)(o[piece] - o[0]));
            for (int64_t k = 1; k <= piece; k++) out_offsets[out + k] = (int32_t)(base + o[k] - o[0]);
            base += o[piece] - o[0];
            out += piece;
            row += piece;
        }
    }
    return RG_OK;
}

/* A score as a key whose ascending order is Arrow's descending order of the scores: -0.0 equal to
 * 0.0, and NaN (every NaN alike) after every number. */
static inline uint64_t descending_key(double score) {
    if (score != score) return UINT64_MAX;
    if (score == 0.0) score = 0.0; /* -0.0 */
    uint64_t u;
    memcpy(&u, &score, sizeof u);
    uint64_t ascending = (u >> 63) ? ~u : u | ((uint64_t)1 << 63);
    return ~ascending; /* below UINT64_MAX for every number */
}

/* keys[0, m) sorted ascending, stable, rows moved with them: for a few keys. */
static void insertion_sort(uint64_t *keys, int32_t *rows, int64_t m) {
    for (int64_t i = 1; i < m; i++) {
        uint64_t k = keys[i];
        int32_t r = rows[i];
        int64_t j = i;
        for (; j > 0 && keys[j - 1] > k; j--) {
            keys[j] = keys[j - 1];
            rows[j] = rows[j - 1];
        }
        keys[j] = k;
        rows[j] = r;
    }
}

#define MAX_BUCKETS 2048
#define MAX_LEVELS 17 /* each level divides the keys' range by 16 at least: 64 bits in 16 levels */

/* keys[0, m) sorted, stable: one pass into about m buckets (up to MAX_BUCKETS), each an equal part
 * of the keys' range (a query's scores spread over it, so most buckets hold a key or two), then
 * each bucket on its own, the same way. spare_*: room for m; ends: room for MAX_LEVELS *
 * MAX_BUCKETS. */
static void sort_score_keys(uint64_t *keys, int32_t *rows, int64_t m, uint64_t *spare_keys, int32_t *spare_rows,
                            int32_t *ends) {
    if (m <= 16) {
        insertion_sort(keys, rows, m);
        return;
    }
    uint64_t least = keys[0], most = keys[0];
    for (int64_t i = 1; i < m; i++) {
        least = keys[i] < least ? keys[i] : least;
        most = keys[i] > most ? keys[i] : most;
    }
    if (least == most) return; /* all equal: already in order */
    int64_t buckets = 16;
    while (buckets < m && buckets < MAX_BUCKETS) buckets *= 2;
    int shift = 0;
    while (((most - least) >> shift) >= (uint64_t)buckets) shift++;
    memset(ends, 0, (size_t)buckets * sizeof(int32_t));
    for (int64_t i = 0; i < m; i++) ends[(keys[i] - least) >> shift]++;
    for (int64_t v = 1; v < buckets; v++) ends[v] += ends[v - 1];
    for (int64_t i = m - 1; i >= 0; i--) { /* back to front: each bucket keeps its rows' order */
        int64_t to = --ends[(keys[i] - least) >> shift];
        spare_keys[to] = keys[i];
        spare_rows[to] = rows[i];
    }
    for (int64_t v = 0; v < buckets; v++) { /* ends[v] is now bucket v's start */
        int64_t start = ends[v], stop = v + 1 < buckets ? ends[v + 1] : m;
        if (stop - start > 1)
            sort_score_keys(spare_keys + start, spare_rows + start, stop - start, keys + start, rows + start,
                            ends + buckets);
    }
    memcpy(keys, spare_keys, (size_t)m * sizeof(uint64_t));
    memcpy(rows, spare_rows, (size_t)m * sizeof(int32_t));
}

/* Grouping a shuffled run by query in streaming passes instead of random reads. Queries are taken
 * in parts of 2**shift codes (at most a few hundred parts): each slice of the file counts its rows
 * (and their strings' bytes) by code (rg_count_codes), then copies them, in file order, to their part's
 * place (rg_partition_words, rg_partition_strings: sequential reads, one write position per part,
 * few enough for the caches); each part, small enough for the cache, is then grouped by code,
 * each query's rows sorted by score, and its columns permuted (rg_sort_parts, rg_permute_strings).
 * Part p holds codes [p << shift, (p + 1) << shift) and rows [part_starts[p], part_starts[p + 1]). */

/* rg_count_codes: for the rows r in [lo, hi) with codes[r] == c, for c in [0, n_codes): counts[c]
 * = how many, bytes[c] = the bytes of their strings. Returns RG_OK, or RG_RANGE for a code outside
 * [0, n_codes). */
int rg_count_codes(int64_t lo, int64_t hi, const int32_t *codes, int64_t n_codes, int64_t chunks,
                   const int64_t *starts, const int32_t *const *offsets, const uint8_t *const *data, int64_t *counts,
                   int64_t *bytes) {
    const Strings s = {chunks, starts, offsets, data};
    memset(counts, 0, (size_t)n_codes * sizeof(int64_t));
    memset(bytes, 0, (size_t)n_codes * sizeof(int64_t));
    int64_t chunk = lo < hi ? chunk_of(&s, lo) : 0;
    for (int64_t r = lo; r < hi; r++) {
        if (codes[r] < 0 || codes[r] >= n_codes) return RG_RANGE;
        while (r >= starts[chunk + 1]) chunk++;
        const int32_t *at = offsets[chunk] + (r - starts[chunk]);
        counts[codes[r]]++;
        bytes[codes[r]] += at[1] - at[0];
    }
    return RG_OK;
}

/* rg_partition_words: each row r in [lo, hi) copied to place next[codes[r] >> shift]++ of out_a
 * (8-byte values as they are) and of out_codes (its code). */
int rg_partition_words(int64_t lo, int64_t hi, const int32_t *codes, int shift, int64_t *next, const uint64_t *a,
                       uint64_t *out_a, int32_t *out_codes) {
    for (int64_t r = lo; r < hi; r++) {
        int32_t c = codes[r];
        int64_t to = next[c >> shift]++;
        out_a[to] = a[r];
        out_codes[to] = c;
    }
    return RG_OK;
}

/* rg_partition_strings: each row r in [lo, hi) of part p = codes[r] >> shift: its string's length
 * to out_offsets[next_row[p]++ + 1], its bytes to out_data from next_byte[p] on (advanced). */
int rg_partition_strings(int64_t lo, int64_t hi, const int32_t *codes, int shift, int64_t chunks,
                         const int64_t *starts, const int32_t *const *offsets, const uint8_t *const *data,
                         int64_t *next_row, int64_t *next_byte, int32_t *out_offsets, uint8_t *out_data) {
    const Strings s = {chunks, starts, offsets, data};
    int64_t chunk = lo < hi ? chunk_of(&s, lo) : 0;
    for (int64_t r = lo; r < hi; r++) {
        while (r >= starts[chunk + 1]) chunk++;
        const int32_t *at = offsets[chunk] + (r - starts[chunk]);
        int32_t length = at[1] - at[0];
        int32_t p = codes[r] >> shift;
        memcpy(out_data + next_byte[p], data[chunk] + at[0], (size_t)length);
        next_byte[p] += length;
        out_offsets[next_row[p]++ + 1] = length;
    }
    return RG_OK;
}

/* One part's rows (their codes, file order kept by rg_partition_words) grouped by code (a counting
 * sort, each row's key made as it is placed) and each group sorted by score: perm[i] = the part's
 * row (from its first) that goes to place i. keys: room for the part's rows; spare_*: for its
 * widest group. */
static void sort_part(int64_t rows, const int32_t *codes, const uint64_t *scores, int64_t first_code,
                      const int64_t *group_starts, int64_t n_groups, int64_t *next, int32_t *perm, uint64_t *keys,
                      uint64_t *spare_keys, int32_t *spare_places, int32_t *ends) {
    int64_t row0 = group_starts[0];
    for (int64_t g = 0; g < n_groups; g++) next[g] = group_starts[g] - row0;
    for (int64_t i = 0; i < rows; i++) {
        int64_t to = next[codes[i] - first_code]++;
        double score;
        memcpy(&score, scores + i, sizeof score);
        keys[to] = descending_key(score);
        perm[to] = (int32_t)i;
    }
    for (int64_t g = 0; g < n_groups; g++) {
        int64_t at = group_starts[g] - row0;
        sort_score_keys(keys + at, perm + at, group_starts[g + 1] - group_starts[g], spare_keys, spare_places, ends);
    }
}

/* rg_sort_parts: for parts [first, last) (of n_codes codes, 2**shift a part; group_starts has
 * n_codes + 1 entries), the rows rg_partition_words left are grouped by code and each query's
 * rows sorted by score descending, stable: Arrow's sort_indices by (code, score descending).
 * scores (float64) and codes are permuted in place; perm[i] = the row of row
 * i's part (from its first, in the order the partition left them) it came from, for
 * rg_permute_strings. Returns RG_OK, or RG_CAPACITY (out of memory). */
int rg_sort_parts(int64_t first, int64_t last, int shift, int64_t n_codes, const int64_t *group_starts,
                  uint64_t *scores, int32_t *codes, int32_t *perm) {
    int64_t widest = 1, widest_group = 1, part_codes = (int64_t)1 << shift;
    for (int64_t c = first << shift; c < n_codes && c < (last << shift); c++)
        if (group_starts[c + 1] - group_starts[c] > widest_group) widest_group = group_starts[c + 1] - group_starts[c];
    for (int64_t p = first; p < last; p++) {
        int64_t c0 = p << shift, c1 = c0 + part_codes < n_codes ? c0 + part_codes : n_codes;
        if (group_starts[c1] - group_starts[c0] > widest) widest = group_starts[c1] - group_starts[c0];
    }
    uint64_t *words = malloc((size_t)(2 * widest + widest_group) * sizeof(uint64_t));
    int32_t *small = malloc((size_t)widest_group * sizeof(int32_t));
    int64_t *next = malloc((size_t)part_codes * sizeof(int64_t));
    int32_t *ends = malloc((size_t)MAX_LEVELS * MAX_BUCKETS * sizeof(int32_t));
    if (!words || !small || !next || !ends) {
        free(words);
        free(small);
        free(next);
        free(ends);
        return RG_CAPACITY;
    }
    uint64_t *part_scores = words, *keys = words + widest, *spare = words + 2 * widest;
    for (int64_t p = first; p < last; p++) {
        int64_t c0 = p << shift, c1 = c0 + part_codes < n_codes ? c0 + part_codes : n_codes;
        int64_t row0 = group_starts[c0], m = group_starts[c1] - row0;
        memcpy(part_scores, scores + row0, (size_t)m * sizeof(uint64_t));
        sort_part(m, codes + row0, part_scores, c0, group_starts + c0, c1 - c0, next, perm + row0, keys, spare, small,
                  ends);
        for (int64_t i = 0; i < m; i++) scores[row0 + i] = part_scores[perm[row0 + i]];
        for (int64_t c = c0; c < c1; c++)
            for (int64_t r = group_starts[c]; r < group_starts[c + 1]; r++) codes[r] = (int32_t)c;
    }
    free(words);
    free(small);
    free(next);
    free(ends);
    return RG_OK;
}

/* rg_permute_strings: for parts [first, last), the strings rg_partition_strings left (lengths in
 * out_offsets, part p's rows from part_starts[p], its bytes from byte_starts[p]) put in the order
 * rg_sort_parts found (perm), and the lengths turned into offsets (out_offsets[0] is the
 * caller's). Returns RG_OK, or RG_CAPACITY (out of memory). */
int rg_permute_strings(int64_t first, int64_t last, const int64_t *part_starts, const int32_t *perm,
                       const int64_t *byte_starts, int32_t *out_offsets, uint8_t *out_data) {
    int64_t widest = 1, widest_bytes = 1;
    for (int64_t p = first; p < last; p++) {
        if (part_starts[p + 1] - part_starts[p] > widest) widest = part_starts[p + 1] - part_starts[p];
        if (byte_starts[p + 1] - byte_starts[p] > widest_bytes) widest_bytes = byte_starts[p + 1] - byte_starts[p];
    }
    int64_t *places = malloc((size_t)(widest + 1) * sizeof(int64_t)); /* each string's start in bytes */
    uint8_t *bytes = malloc((size_t)widest_bytes);
    if (!places || !bytes) {
        free(places);
        free(bytes);
        return RG_CAPACITY;
    }
    for (int64_t p = first; p < last; p++) {
        int64_t row = part_starts[p], m = part_starts[p + 1] - row, at = byte_starts[p];
        memcpy(bytes, out_data + at, (size_t)(byte_starts[p + 1] - at));
        places[0] = 0;
        for (int64_t i = 0; i < m; i++) places[i + 1] = places[i] + out_offsets[row + i + 1];
        for (int64_t i = 0; i < m; i++) {
            int32_t from = perm[row + i];
            int64_t length = places[from + 1] - places[from];
            memcpy(out_data + at, bytes + places[from], (size_t)length);
            at += length;
            out_offsets[row + i + 1] = (int32_t)at;
        }
    }
    free(places);
    free(bytes);
    return RG_OK;
}
