/*
 * verdictpack.core._kernel -- the compiled batch engine of the sequential core.
 *
 * One replicate of a bank of mixture confidence sequences is one row of a float64 state array;
 * this file advances rows one observation at a time, exactly as the scalar construction
 * (verdictpack.core._mixture.MixtureCS, _tracker.HTracker) does, with the arithmetic of the batch
 * engine described in _mixture's module docstring:
 *
 *   - per plane p (stream j = p / 2, side s = +1 for the lower bound, -1 for the upper) and bet
 *     k: the log-wealth W_k at the bound b as of the last search or fold, the pending product
 *     Q_k of the factors u = 1 + s*lambda_k*(x - b) since then, P0_k = exp(max(W_k + log(w_k/c),
 *     floor)), and G_k = -dW_k/dm, C_k = -d^2 W_k/dm^2 kept exactly (G += s*lambda/u,
 *     C += (s*lambda/u)^2 per observation);
 *   - the move test sum_k P0_k * Q_k >= 1 (E_t(b) >= c: the bound must move) costs one multiply
 *     per bet; every `every` observations W += log Q (the fold) keeps Q in range;
 *   - a search runs the fast path (second-order Taylor start from the linear terms, exact
 *     evaluations from the counts with a log-space Newton step each, until Newton's error
 *     estimate is below `fast_err`; the bound moves outward by `outward` + 2 * estimate and is
 *     intersected with the previous bound), and otherwise the safeguarded E-space Newton from
 *     the conservative side with bisection on its bracket (_mixture._advance_newton);
 *   - tracker rows (mode 1 = corners, 2 = hybrid) also keep the h-interval, the empty flag and
 *     the roots consumed; classify() is _hinterval.classify on codes;
 *   - plug_observe and plug_log_e: the plug-in and blend bets of _adaptive_batch (its docstring
 *     has the search), their state in that module's arrays (passed one by one); libm's logs,
 *     vlog for the blend's grid half;
 *   - log_e: log E at a candidate mean of every row (the evidence rows of a run); libm: the C
 *     library's log, exp, log1p, expm1, asin and sin element by element for core._libm, where
 *     numpy's own loops would give other last bits on a CPU with AVX-512.
 *
 * Replicates never interact, so a row's numbers do not depend on which rows share the array or
 * the call (the battery's blocks, workers and threads cannot change them). Compiled with
 * -ffp-contract=off: no fused multiply-adds, the same rounding on every architecture; the logs
 * of the exact evaluations are this file's own (vlog), exp, asin and sqrt the C library's.
 *
 * The layout of a row and of the two spec arrays is fixed here and read by Python through
 * layout(); nothing else in Python hard-codes an offset.
 *
 *   fspec (float64): threshold, fast_err, outward, newton_tol, region_tol, log_floor,
 *                    lambda[K], log w[K], log c[ns], values[vt]
 *   ispec (int64):   ns, K, vt, nh, mode, every, fast_iter, newton_max_iter, bisect_iter,
 *                    voff[ns + 1], dflat[nm * nh] (hybrid: D index of (model i, human j))
 *   row (float64):   b[S] | phi(b)[S] | W[S*K] | Q[S*K] | P0[S*K] | G[S*K] | C[S*K] |
 *                    folds[S] | t[ns] | counts[vt] | h_lo, h_hi, empty, roots   (S = 2 * ns)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define MAX_K 64
#if defined(__GNUC__) && !defined(__clang__)
/* a loop over a handful of bets: vector set-up costs more than it saves */
#define NO_VECTORIZE __attribute__((optimize("no-tree-vectorize")))
#else
#define NO_VECTORIZE
#endif
#define MAX_STREAMS 3
#define N_FSCALARS 6
#define N_ISCALARS 9

typedef struct {
    int ns, s, k, vt, nh, nm, mode, every, fast_iter, newton_max_iter, bisect_iter;
    double threshold, fast_err, outward, newton_tol, region_tol, log_floor, exp_floor;
    const double *lam, *logw, *logc, *values;
    const int64_t *voff, *dflat;
    double lc[MAX_STREAMS][MAX_K]; /* log(w_k / c_j) */
    double slam[2][MAX_K];         /* signed bets: side 0 (lower bound) +lambda, side 1 -lambda */
    int max_nv;                    /* largest support */
    double *scratch;               /* (2 + 2K) * max_nv doubles, owned by the calling entry point */
    Py_ssize_t o_b, o_phi, o_w, o_q, o_p, o_g, o_c, o_f, o_t, o_n, o_h, stride;
} Spec;

/* ------------------------------------------------------------------------------------------ */
/* spec and layout                                                                            */
/* ------------------------------------------------------------------------------------------ */

static int layout_from(Spec *sp, const int64_t *iv, Py_ssize_t ni) {
    if (ni < N_ISCALARS) {
        PyErr_SetString(PyExc_ValueError, "ispec: too short");
        return -1;
    }
    sp->ns = (int)iv[0];
    sp->k = (int)iv[1];
    sp->vt = (int)iv[2];
    sp->nh = (int)iv[3];
    sp->mode = (int)iv[4];
    sp->every = (int)iv[5];
    sp->fast_iter = (int)iv[6];
    sp->newton_max_iter = (int)iv[7];
    sp->bisect_iter = (int)iv[8];
    if (sp->ns < 1 || sp->ns > MAX_STREAMS || sp->k < 1 || sp->k > MAX_K || sp->vt < 1 ||
        sp->every < 1 || sp->mode < 0 || sp->mode > 2 || (sp->mode == 1 && sp->ns != 2) ||
        (sp->mode == 2 && sp->ns != 3) || ni < N_ISCALARS + sp->ns + 1) {
        PyErr_SetString(PyExc_ValueError, "ispec: inconsistent sizes");
        return -1;
    }
    sp->voff = iv + N_ISCALARS;
    for (int j = 0; j < sp->ns; j++) {
        if (sp->voff[j] < 0 || sp->voff[j + 1] <= sp->voff[j] || sp->voff[j + 1] > sp->vt) {
            PyErr_SetString(PyExc_ValueError, "ispec: bad support offsets");
            return -1;
        }
    }
    sp->nm = (int)(sp->voff[1] - sp->voff[0]);
    sp->max_nv = 0;
    for (int j = 0; j < sp->ns; j++)
        if (sp->voff[j + 1] - sp->voff[j] > sp->max_nv)
            sp->max_nv = (int)(sp->voff[j + 1] - sp->voff[j]);
    sp->scratch = NULL;
    sp->dflat = NULL;
    if (sp->mode == 2) {
        if (sp->nh != (int)(sp->voff[2] - sp->voff[1]) ||
            ni != N_ISCALARS + sp->ns + 1 + (Py_ssize_t)sp->nm * sp->nh) {
            PyErr_SetString(PyExc_ValueError, "ispec: bad D table");
            return -1;
        }
        sp->dflat = sp->voff + sp->ns + 1;
        int nd = (int)(sp->voff[3] - sp->voff[2]);
        for (Py_ssize_t i = 0; i < (Py_ssize_t)sp->nm * sp->nh; i++) {
            if (sp->dflat[i] < 0 || sp->dflat[i] >= nd) {
                PyErr_SetString(PyExc_ValueError, "ispec: bad D table entry");
                return -1;
            }
        }
    }
    Py_ssize_t s = 2 * sp->ns, sk = s * sp->k;
    sp->s = (int)s;
    sp->o_b = 0;
    sp->o_phi = s;
    sp->o_w = 2 * s;
    sp->o_q = sp->o_w + sk;
    sp->o_p = sp->o_q + sk;
    sp->o_g = sp->o_p + sk;
    sp->o_c = sp->o_g + sk;
    sp->o_f = sp->o_c + sk;
    sp->o_t = sp->o_f + s;
    sp->o_n = sp->o_t + sp->ns;
    sp->o_h = sp->o_n + sp->vt;
    sp->stride = sp->o_h + 4;
    return 0;
}

static int unpack(Spec *sp, const Py_buffer *fb, const Py_buffer *ib) {
    if (layout_from(sp, (const int64_t *)ib->buf, ib->len / (Py_ssize_t)sizeof(int64_t)) < 0)
        return -1;
    Py_ssize_t nf = fb->len / (Py_ssize_t)sizeof(double);
    if (nf != N_FSCALARS + 2 * sp->k + sp->ns + sp->vt) {
        PyErr_SetString(PyExc_ValueError, "fspec: size does not match ispec");
        return -1;
    }
    const double *fv = (const double *)fb->buf;
    sp->threshold = fv[0];
    sp->fast_err = fv[1];
    sp->outward = fv[2];
    sp->newton_tol = fv[3];
    sp->region_tol = fv[4];
    sp->log_floor = fv[5];
    sp->exp_floor = exp(fv[5]);
    sp->lam = fv + N_FSCALARS;
    sp->logw = sp->lam + sp->k;
    sp->logc = sp->logw + sp->k;
    sp->values = sp->logc + sp->ns;
    for (int j = 0; j < sp->ns; j++)
        for (int k = 0; k < sp->k; k++) sp->lc[j][k] = sp->logw[k] - sp->logc[j];
    for (int k = 0; k < sp->k; k++) {
        sp->slam[0][k] = sp->lam[k];
        sp->slam[1][k] = -sp->lam[k];
    }
    return 0;
}

static int alloc_scratch(Spec *sp) {
    sp->scratch = PyMem_RawMalloc((size_t)(2 + 2 * sp->k) * (size_t)sp->max_nv * sizeof(double));
    if (sp->scratch == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static int check_state(const Spec *sp, const Py_buffer *st, Py_ssize_t *rows) {
    Py_ssize_t n = st->len / (Py_ssize_t)sizeof(double);
    if (n % sp->stride != 0) {
        PyErr_SetString(PyExc_ValueError, "state: size is not a multiple of the row stride");
        return -1;
    }
    *rows = n / sp->stride;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* one stream: exact evaluation, derivatives, the search                                      */
/* ------------------------------------------------------------------------------------------ */

static inline double clip01(double x) { return x < 0.0 ? 0.0 : (x > 1.0 ? 1.0 : x); }

static inline double phi01(double p) { return 2.0 * asin(sqrt(clip01(p))); }

/* Natural log of n positive normal numbers (every factor u = 1 + s*lambda*(v - m) lies in
 * [1 - lambda, 1 + lambda] with 0 < lambda < 1). The classic reduction x = 2^k * m with m in
 * [sqrt(1/2), sqrt(2)), s = (m - 1)/(m + 1), log m = 2 atanh s by the minimax polynomial of
 * fdlibm's log (its published coefficients), within 1 ulp of glibc's log (checked by the
 * tests). Written branch-free in plain IEEE arithmetic so that the compiler vectorises the loop
 * (SSE2 lanes, AVX2 lanes where the CPU has them): every lane, scalar or vector, computes the
 * same operations, so the results are identical on every machine and dispatch path. */
static const double LG1 = 6.666666666666735130e-01, LG2 = 3.999999999940941908e-01,
                    LG3 = 2.857142874366239149e-01, LG4 = 2.222219843214978396e-01,
                    LG5 = 1.818357216161805012e-01, LG6 = 1.531383769920937332e-01,
                    LG7 = 1.479819860511658591e-01, LN2_HI = 6.93147180369123816490e-01,
                    LN2_LO = 1.90821492927058770002e-10;

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
static void vlog(const double *restrict x, double *restrict out, int n) {
    for (int i = 0; i < n; i++) {
        uint64_t bits, eb, mb;
        double dk, mant;
        memcpy(&bits, &x[i], sizeof bits);
        const uint64_t t = bits + (0x3ff0000000000000ULL - 0x3fe6a09e667f3bcdULL);
        eb = (t >> 52) | 0x4330000000000000ULL; /* 2^52 + the biased exponent, exactly */
        memcpy(&dk, &eb, sizeof dk);
        dk -= 4503599627370496.0 + 1023.0;
        mb = (t & 0x000fffffffffffffULL) + 0x3fe6a09e667f3bcdULL;
        memcpy(&mant, &mb, sizeof mant);
        const double f = mant - 1.0, s = f / (2.0 + f), z = s * s, w = z * z;
        const double t1 = w * (LG2 + w * (LG4 + w * LG6));
        const double t2 = z * (LG1 + w * (LG3 + w * (LG5 + w * LG7)));
        const double r = t2 + t1, hfsq = 0.5 * f * f;
        out[i] = dk * LN2_HI - ((hfsq - (s * (hfsq + r) + dk * LN2_LO)) - f);
    }
}

/* The factors u_kv = 1 + s*lambda_k*(v - m) of the values observed so far, bet-major, with
 * their logs; returns how many values were observed (the counts land in nn). */
static int factor_logs(const Spec *sp, const double *row, int j, double sg, double m,
                       double **u_out, double **lg_out, double **nn_out) {
    const int64_t v0 = sp->voff[j], nv = sp->voff[j + 1] - v0;
    const double *vals = sp->values + v0, *cnt = row + sp->o_n + v0;
    double *dv = sp->scratch, *nn = dv + sp->max_nv, *u = nn + sp->max_nv;
    double *lg = u + (Py_ssize_t)sp->k * sp->max_nv;
    int used = 0;
    for (int64_t v = 0; v < nv; v++) {
        if (cnt[v] == 0.0) continue;
        dv[used] = vals[v] - m;
        nn[used] = cnt[v];
        used++;
    }
    for (int k = 0; k < sp->k; k++) {
        const double sl = sg * sp->lam[k];
        double *uk = u + (Py_ssize_t)k * used;
        for (int v = 0; v < used; v++) uk[v] = 1.0 + sl * dv[v];
    }
    vlog(u, lg, sp->k * used);
    *u_out = u;
    *lg_out = lg;
    *nn_out = nn;
    return used;
}

/* Exact (W, G, C) at m from the counts of stream j, side sg. */
static void eval_state(const Spec *sp, const double *row, int j, double sg, double m, double *w,
                       double *g, double *c) {
    double *u, *lg, *nn;
    const int used = factor_logs(sp, row, j, sg, m, &u, &lg, &nn);
    for (int k = 0; k < sp->k; k++) {
        const double sl = sg * sp->lam[k];
        const double *uk = u + (Py_ssize_t)k * used, *lk = lg + (Py_ssize_t)k * used;
        double ws = 0.0, gs = 0.0, cs = 0.0;
        for (int v = 0; v < used; v++) {
            const double q = sl / uk[v];
            ws += nn[v] * lk[v];
            const double nq = nn[v] * q;
            gs += nq;
            cs += nq * q;
        }
        w[k] = ws;
        g[k] = gs;
        c[k] = cs;
    }
}

/* log E at m (log-sum-exp over the bets). */
static double log_e_at(const Spec *sp, const double *row, int j, double sg, double m) {
    double *u, *lg, *nn;
    const int used = factor_logs(sp, row, j, sg, m, &u, &lg, &nn);
    double a[MAX_K], mx = -INFINITY;
    for (int k = 0; k < sp->k; k++) {
        const double *lk = lg + (Py_ssize_t)k * used;
        double ws = 0.0;
        for (int v = 0; v < used; v++) ws += nn[v] * lk[v];
        a[k] = ws + sp->logw[k];
        if (a[k] > mx) mx = a[k];
    }
    double z = 0.0;
    for (int k = 0; k < sp->k; k++) z += exp(a[k] - mx);
    return mx + log(z);
}

/* log E, d log E/dm and d^2 log E/dm^2 from the per-bet state (_mixture._derivs_py). */
static void derivs(const Spec *sp, const double *w, const double *g, const double *c,
                   double *loge, double *d1, double *d2, double *e_out, double *mx_out) {
    double a[MAX_K], e[MAX_K], mx = -INFINITY;
    for (int k = 0; k < sp->k; k++) {
        a[k] = w[k] + sp->logw[k];
        if (a[k] > mx) mx = a[k];
    }
    double z = 0.0, s1 = 0.0, s2 = 0.0;
    for (int k = 0; k < sp->k; k++) {
        e[k] = exp(a[k] - mx);
        z += e[k];
        s1 += e[k] * g[k];
        s2 += e[k] * (g[k] * g[k] - c[k]);
    }
    const double dd = -s1 / z;
    *loge = mx + log(z);
    *d1 = dd;
    *d2 = s2 / z - dd * dd;
    if (e_out != NULL) {
        memcpy(e_out, e, (size_t)sp->k * sizeof(double));
        *mx_out = mx;
    }
}

/* Root of h + d1*s + d2*s^2/2 nearest 0 (Newton's step where there is no real root). */
static double taylor_start(double h, double d1, double d2) {
    if (d1 == 0.0) return 0.0;
    const double disc = d1 * d1 - 2.0 * d2 * h;
    if (disc >= 0.0) {
        const double den = d1 + copysign(sqrt(disc), d1);
        if (den != 0.0) {
            const double quad = -2.0 * h / den;
            if (isfinite(quad)) return quad;
        }
    }
    return -h / d1;
}

/* Plane p's state := exact (W, G, C) at its bound with linear terms P0; Q restarts. */
static void set_state_p(const Spec *sp, double *row, int p, const double *w, const double *g,
                        const double *c, const double *pz) {
    const Py_ssize_t o = (Py_ssize_t)p * sp->k;
    memcpy(row + sp->o_w + o, w, (size_t)sp->k * sizeof(double));
    memcpy(row + sp->o_g + o, g, (size_t)sp->k * sizeof(double));
    memcpy(row + sp->o_c + o, c, (size_t)sp->k * sizeof(double));
    memcpy(row + sp->o_p + o, pz, (size_t)sp->k * sizeof(double));
    for (int i = 0; i < sp->k; i++) row[sp->o_q + o + i] = 1.0;
    row[sp->o_f + p] = 0.0;
}

/* The same with P0_k = exp(max(W_k + log(w_k/c), floor)) computed afresh. */
static void set_state(const Spec *sp, double *row, int p, const double *w, const double *g,
                      const double *c) {
    double pz[MAX_K];
    for (int i = 0; i < sp->k; i++) pz[i] = exp(fmax(w[i] + sp->lc[p >> 1][i], sp->log_floor));
    set_state_p(sp, row, p, w, g, c, pz);
}

/* W += log Q; the pending product restarts (the move test is unchanged up to the floor). */
static void fold(const Spec *sp, double *row, int p) {
    const int k = sp->k, j = p >> 1;
    double *W = row + sp->o_w + (Py_ssize_t)p * k, *Q = row + sp->o_q + (Py_ssize_t)p * k;
    double *P = row + sp->o_p + (Py_ssize_t)p * k;
    for (int i = 0; i < k; i++) {
        W[i] += log(Q[i]);
        Q[i] = 1.0;
        P[i] = exp(fmax(W[i] + sp->lc[j][i], sp->log_floor));
    }
    row[sp->o_f + p] = 0.0;
}

/* Bisection on [inside, outside]: E(inside) >= c > E(outside); the conservative end. */
static double bisect(const Spec *sp, const double *row, int j, double sg, double inside,
                     double outside) {
    const double logc = sp->logc[j];
    for (int it = 0; it < sp->bisect_iter; it++) {
        const double mid = 0.5 * (inside + outside);
        if (mid == inside || mid == outside) break;
        if (log_e_at(sp, row, j, sg, mid) >= logc)
            inside = mid;
        else
            outside = mid;
    }
    return inside;
}

/* The safeguarded Newton of _mixture._advance_newton for one row; the new bound. */
static double advance_newton(const Spec *sp, const double *row, int j, double sg, double start) {
    const double logc = sp->logc[j];
    double w[MAX_K], g[MAX_K], c[MAX_K];
    double inside = start, outside = sg > 0.0 ? 1.0 : 0.0, m = start, final = start;
    int safe = 0, done = 0;
    for (int it = 0; it < sp->newton_max_iter; it++) {
        double loge, dloge, d2;
        eval_state(sp, row, j, sg, m, w, g, c);
        derivs(sp, w, g, c, &loge, &dloge, &d2, NULL, NULL);
        const int ins = loge >= logc;
        const double u = logc - loge;
        const double e_step = expm1(u) / dloge;
        const double best = ins ? m : inside;
        inside = best;
        if (!ins) outside = m;
        if (fabs(e_step) < sp->newton_tol) {
            final = m + e_step;
            done = 1;
            break;
        }
        if (!ins && m == best) { /* E(start) < c on recomputation: the bound stays */
            done = 1;
            break;
        }
        double step = safe ? e_step : u / dloge;
        step = fmax(step * sg, 0.0) * sg;
        const double nxt_out = m + e_step;
        const int stall = !ins && ((nxt_out - best) * sg <= 0.0);
        if (stall) safe = 1;
        m = clip01(ins ? m + step : (stall ? best : nxt_out));
    }
    if (!done) final = bisect(sp, row, j, sg, inside, outside);
    return clip01(start + sg * fmax(sg * (final - start) - sp->outward, 0.0));
}

static inline void set_bound(const Spec *sp, double *row, int p, double bound) {
    row[sp->o_b + p] = bound;
    if (p < 4) row[sp->o_phi + p] = phi01(bound); /* the h-interval's corners */
}

/* Move plane p's bound (E_t(b) >= c): the fast path, else the safeguarded Newton. */
static void search(const Spec *sp, double *row, int p) {
    const int k = sp->k, j = p >> 1;
    const double sg = (p & 1) ? -1.0 : 1.0, logc = sp->logc[j];
    const double start = row[sp->o_b + p];
    const double *P0 = row + sp->o_p + (Py_ssize_t)p * k, *Q0 = row + sp->o_q + (Py_ssize_t)p * k;
    const double *G0 = row + sp->o_g + (Py_ssize_t)p * k, *C0 = row + sp->o_c + (Py_ssize_t)p * k;
    double w[MAX_K], g[MAX_K], c[MAX_K], e[MAX_K], pz[MAX_K], loge, d1, d2, mx;
    /* The start needs only log E(b)/c and the bets' shares of E(b): both are in the linear
       terms P0_k*Q_k = w_k*E_k(b)/c (no log, no exp; a floored term is below e^-600 of c) */
    double z = 0.0, s1 = 0.0, s2 = 0.0;
    for (int i = 0; i < k; i++) {
        const double e = P0[i] * Q0[i];
        z += e;
        s1 += e * G0[i];
        s2 += e * (G0[i] * G0[i] - C0[i]);
    }
    d1 = -s1 / z;
    d2 = s2 / z - d1 * d1;
    double m = clip01(start + taylor_start(log(z), d1, d2));
    for (int it = 0; it < sp->fast_iter; it++) {
        eval_state(sp, row, j, sg, m, w, g, c);
        derivs(sp, w, g, c, &loge, &d1, &d2, e, &mx);
        if (d1 == 0.0 || !isfinite(d1)) break;
        const double step = (logc - loge) / d1;
        const double err = 0.5 * fabs(d2 / d1) * step * step;
        const double nxt = m + step;
        if (err <= sp->fast_err) {
            const double bound =
                clip01(start + sg * fmax(sg * (nxt - start) - sp->outward - 2.0 * err, 0.0));
            const double delta = bound - m;
            /* P0_k at the bound = exp(W_k(m) - G_k*delta + log(w_k/c)), from the shares
               e_k = exp(W_k(m) + log w_k - mx) already at hand: one exp, not K */
            const double base = exp(mx - logc);
            for (int i = 0; i < k; i++) {
                const double x = -g[i] * delta;
                const double ex =
                    fabs(x) < 1e-4 ? 1.0 + x * (1.0 + x * (0.5 + x * (1.0 / 6.0 + x / 24.0)))
                                   : exp(x);
                const double lp = w[i] + sp->lc[j][i] + x;
                pz[i] = lp < sp->log_floor ? sp->exp_floor : e[i] * base * ex;
                w[i] += x;
                g[i] += c[i] * delta;
            }
            set_state_p(sp, row, p, w, g, c, pz);
            set_bound(sp, row, p, bound);
            return;
        }
        m = clip01(nxt);
    }
    const double b2 = advance_newton(sp, row, j, sg, start);
    eval_state(sp, row, j, sg, b2, w, g, c);
    set_state(sp, row, p, w, g, c);
    set_bound(sp, row, p, b2);
}

/* Stream j observes support value vidx on both planes; returns 1 if a bound was searched. */
NO_VECTORIZE static int observe(const Spec *sp, double *row, int j, int64_t vidx) {
    const int k = sp->k;
    const double x = sp->values[sp->voff[j] + vidx];
    row[sp->o_n + sp->voff[j] + vidx] += 1.0;
    row[sp->o_t + j] += 1.0;
    int moved = 0;
    for (int side = 0; side < 2; side++) {
        const int p = 2 * j + side;
        const double *sls = sp->slam[side];
        const double d = x - row[sp->o_b + p];
        double *Q = row + sp->o_q + (Py_ssize_t)p * k, *P = row + sp->o_p + (Py_ssize_t)p * k;
        double *G = row + sp->o_g + (Py_ssize_t)p * k, *C = row + sp->o_c + (Py_ssize_t)p * k;
        double tot = 0.0;
        for (int i = 0; i < k; i++) {
            const double sl = sls[i];
            const double u = 1.0 + sl * d;
            const double q = sl / u;
            Q[i] *= u;
            G[i] += q;
            C[i] += q * q;
            tot += P[i] * Q[i];
        }
        row[sp->o_f + p] += 1.0;
        if (tot >= 1.0) {
            search(sp, row, p);
            moved = 1;
        } else if (row[sp->o_f + p] >= sp->every) {
            fold(sp, row, p);
        }
    }
    return moved;
}

/* ------------------------------------------------------------------------------------------ */
/* trackers: the h-interval and the verdict                                                   */
/* ------------------------------------------------------------------------------------------ */

/* The extreme of g(y) = phi(y + d) - phi(y) on the edge x - y = d, y in [y_lo, y_hi]
 * (_hinterval._edge_py). g has one stationary point y* = (1 - d)/2: a minimum for d > 0, a
 * maximum for d < 0 (g = 0 for d = 0). So where y* is the extreme sought, g at y* clamped to
 * the edge is it (g is monotone on either side of y*); otherwise it is at one of the ends. */
static double edge(double lm, double um, double lh, double uh, double d, int lowest) {
    const double y_lo = fmax(lh, lm - d), y_hi = fmin(uh, um - d);
    if ((lowest && d > 0.0) || (!lowest && d < 0.0)) {
        const double y_st = fmin(fmax(0.5 * (1.0 - d), y_lo), y_hi);
        return phi01(y_st + d) - phi01(y_st);
    }
    const double a = phi01(y_lo + d) - phi01(y_lo);
    const double b = phi01(y_hi + d) - phi01(y_hi);
    return lowest ? fmin(a, b) : fmax(a, b);
}

/* The h-interval from the bounds (frozen once the region is empty). */
static void refresh(const Spec *sp, double *row) {
    double *h = row + sp->o_h;
    if (h[2] != 0.0) return;
    const double *b = row + sp->o_b, *f = row + sp->o_phi;
    const double lm = b[0], um = b[1], lh = b[2], uh = b[3];
    if (sp->mode == 1) {
        if (lm > um || lh > uh) {
            h[2] = 1.0;
            return;
        }
        h[0] = f[0] - f[3];
        h[1] = f[1] - f[2];
        return;
    }
    const double tol = sp->region_tol, ld = 2.0 * b[4] - 1.0, ud = 2.0 * b[5] - 1.0;
    if (lm > um + tol || lh > uh + tol || ld > ud + tol || um - lh < ld - tol ||
        lm - uh > ud + tol) {
        h[2] = 1.0;
        return;
    }
    h[0] = (lm - uh >= ld - tol) ? f[0] - f[3] : edge(lm, um, lh, uh, ld, 1);
    h[1] = (um - lh <= ud + tol) ? f[1] - f[2] : edge(lm, um, lh, uh, ud, 0);
}

/* _hinterval.classify: 0 continue, 1 effect, 2 no positive effect, 3 below, 4 inconclusive. */
static inline int8_t classify(const Spec *sp, const double *row, int at_cap) {
    const double lo = row[sp->o_h], hi = row[sp->o_h + 1];
    if (lo >= sp->threshold) return 1;
    if (hi <= 0.0) return 2;
    if (hi < sp->threshold) return 3;
    return at_cap ? 4 : 0;
}

static void init_row(const Spec *sp, double *row) {
    memset(row, 0, (size_t)sp->stride * sizeof(double));
    for (int p = 0; p < sp->s; p++) {
        set_bound(sp, row, p, (p & 1) ? 1.0 : 0.0);
        for (int i = 0; i < sp->k; i++) {
            row[sp->o_q + (Py_ssize_t)p * sp->k + i] = 1.0;
            row[sp->o_p + (Py_ssize_t)p * sp->k + i] = exp(fmax(sp->lc[p >> 1][i], sp->log_floor));
        }
    }
    row[sp->o_h] = -M_PI;
    row[sp->o_h + 1] = M_PI;
}

/* ------------------------------------------------------------------------------------------ */
/* Python entry points                                                                        */
/* ------------------------------------------------------------------------------------------ */

/* Release the buffers an entry point acquired (and its scratch). */
static void release(Spec *sp, Py_buffer **bufs, int n) {
    PyMem_RawFree(sp->scratch);
    sp->scratch = NULL;
    for (int i = 0; i < n; i++) PyBuffer_Release(bufs[i]);
}

static PyObject *py_layout(PyObject *self, PyObject *args) {
    Py_buffer ib;
    Spec sp = {0};
    if (!PyArg_ParseTuple(args, "y*", &ib)) return NULL;
    int rc = layout_from(&sp, (const int64_t *)ib.buf, ib.len / (Py_ssize_t)sizeof(int64_t));
    PyBuffer_Release(&ib);
    if (rc < 0) return NULL;
    return Py_BuildValue("{s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n,s:n}", "b", sp.o_b,
                         "phi", sp.o_phi, "w", sp.o_w, "q", sp.o_q, "p", sp.o_p, "g", sp.o_g,
                         "c", sp.o_c, "folds", sp.o_f, "t", sp.o_t, "counts", sp.o_n, "h", sp.o_h,
                         "stride", sp.stride);
}

static PyObject *py_init(PyObject *self, PyObject *args) {
    Py_buffer fb, ib, st;
    Spec sp = {0};
    Py_ssize_t rows;
    if (!PyArg_ParseTuple(args, "y*y*w*", &fb, &ib, &st)) return NULL;
    PyObject *res = NULL;
    if (unpack(&sp, &fb, &ib) == 0 && check_state(&sp, &st, &rows) == 0) {
        double *base = (double *)st.buf;
        for (Py_ssize_t r = 0; r < rows; r++) init_row(&sp, base + r * sp.stride);
        res = Py_None;
        Py_INCREF(res);
    }
    release(&sp, (Py_buffer *[]){&fb, &ib, &st}, 3);
    return res;
}

/* step(fspec, ispec, state, idx (R, ns) int64, act (R, ns) uint8, moved (R, ns) uint8 out,
 *      searches (ns,) int64 in/out): stream j of replicate r observes support_j[idx[r, j]] where
 *      act[r, j]; tracker rows refresh their h-interval when a bound moved and count a root
 *      where stream 0 observed. */
static PyObject *py_step(PyObject *self, PyObject *args) {
    Py_buffer fb, ib, st, ix, ac, mv, se;
    Spec sp = {0};
    Py_ssize_t rows;
    if (!PyArg_ParseTuple(args, "y*y*w*y*y*w*w*", &fb, &ib, &st, &ix, &ac, &mv, &se)) return NULL;
    PyObject *res = NULL;
    if (unpack(&sp, &fb, &ib) < 0 || check_state(&sp, &st, &rows) < 0) goto done;
    if (alloc_scratch(&sp) < 0) goto done;
    const Py_ssize_t cells = rows * sp.ns;
    if (ix.len != cells * (Py_ssize_t)sizeof(int64_t) || ac.len != cells || mv.len != cells ||
        se.len != sp.ns * (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "step: array sizes do not match the state");
        goto done;
    }
    const int64_t *idx = (const int64_t *)ix.buf;
    const uint8_t *act = (const uint8_t *)ac.buf;
    for (Py_ssize_t i = 0; i < cells; i++) {
        const int j = (int)(i % sp.ns);
        if (act[i] && (idx[i] < 0 || idx[i] >= sp.voff[j + 1] - sp.voff[j])) {
            PyErr_Format(PyExc_ValueError, "step: index %lld out of the support of stream %d",
                         (long long)idx[i], j);
            goto done;
        }
    }
    uint8_t *moved = (uint8_t *)mv.buf;
    int64_t *searches = (int64_t *)se.buf;
    double *base = (double *)st.buf;
    Py_BEGIN_ALLOW_THREADS;
    for (Py_ssize_t r = 0; r < rows; r++) {
        double *row = base + r * sp.stride;
        int any = 0;
        for (int j = 0; j < sp.ns; j++) {
            const Py_ssize_t i = r * sp.ns + j;
            moved[i] = 0;
            if (!act[i]) continue;
            if (observe(&sp, row, j, idx[i])) {
                moved[i] = 1;
                searches[j] += 1;
                any = 1;
            }
        }
        if (sp.mode) {
            if (act[r * sp.ns]) row[sp.o_h + 3] += 1.0;
            if (any) refresh(&sp, row);
        }
    }
    Py_END_ALLOW_THREADS;
    res = Py_None;
    Py_INCREF(res);
done:
    release(&sp, (Py_buffer *[]){&fb, &ib, &st, &ix, &ac, &mv, &se}, 7);
    return res;
}

/* run(fspec, ispec, state, model (R, T) int64, human (R, T) int64, cap, codes (R,) int8 out,
 *     searches (ns,) int64 in/out): every tracker row consumes roots (model[r, i], human[r, i])
 *     for i = 0, 1, ... until its verdict or until it holds `cap` roots (then at_cap); a row
 *     already decided consumes nothing. Human evidence on every root. */
static PyObject *py_run(PyObject *self, PyObject *args) {
    Py_buffer fb, ib, st, mb, hb, cb, se;
    Py_ssize_t cap;
    Spec sp = {0};
    Py_ssize_t rows;
    if (!PyArg_ParseTuple(args, "y*y*w*y*y*nw*w*", &fb, &ib, &st, &mb, &hb, &cap, &cb, &se))
        return NULL;
    PyObject *res = NULL;
    if (unpack(&sp, &fb, &ib) < 0 || check_state(&sp, &st, &rows) < 0) goto done;
    if (sp.mode == 0) {
        PyErr_SetString(PyExc_ValueError, "run: the state is not a tracker's");
        goto done;
    }
    if (alloc_scratch(&sp) < 0) goto done;
    if (rows == 0 || mb.len % (rows * (Py_ssize_t)sizeof(int64_t)) != 0 || hb.len != mb.len ||
        cb.len != rows || se.len != sp.ns * (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "run: array sizes do not match the state");
        goto done;
    }
    const Py_ssize_t horizon = mb.len / (rows * (Py_ssize_t)sizeof(int64_t));
    const int64_t *mi = (const int64_t *)mb.buf, *hi = (const int64_t *)hb.buf;
    double *base = (double *)st.buf;
    for (Py_ssize_t r = 0; r < rows; r++) {
        const double *row = base + r * sp.stride, have = row[sp.o_h + 3];
        if (classify(&sp, row, have >= (double)cap) == 0 && (double)horizon < (double)cap - have) {
            PyErr_Format(PyExc_ValueError, "run: %zd roots given, replicate %zd needs %zd",
                         horizon, r, (Py_ssize_t)((double)cap - have));
            goto done;
        }
    }
    for (Py_ssize_t i = 0; i < rows * horizon; i++) {
        if (mi[i] < 0 || mi[i] >= sp.nm || hi[i] < 0 || hi[i] >= sp.voff[2] - sp.voff[1]) {
            PyErr_Format(PyExc_ValueError, "run: root %zd of replicate %zd is off the support",
                         i % horizon, i / horizon);
            goto done;
        }
    }
    int8_t *codes = (int8_t *)cb.buf;
    int64_t *searches = (int64_t *)se.buf;
    Py_BEGIN_ALLOW_THREADS;
    for (Py_ssize_t r = 0; r < rows; r++) {
        double *row = base + r * sp.stride;
        const int64_t *m = mi + r * horizon, *h = hi + r * horizon;
        int8_t code = classify(&sp, row, row[sp.o_h + 3] >= (double)cap);
        for (Py_ssize_t i = 0; code == 0; i++) {
            int any = observe(&sp, row, 0, m[i]);
            int mh = observe(&sp, row, 1, h[i]);
            searches[0] += any;
            searches[1] += mh;
            any |= mh;
            if (sp.mode == 2) {
                int md = observe(&sp, row, 2, sp.dflat[m[i] * sp.nh + h[i]]);
                searches[2] += md;
                any |= md;
            }
            row[sp.o_h + 3] += 1.0;
            if (any) refresh(&sp, row);
            code = classify(&sp, row, row[sp.o_h + 3] >= (double)cap);
        }
        codes[r] = code;
    }
    Py_END_ALLOW_THREADS;
    res = Py_None;
    Py_INCREF(res);
done:
    release(&sp, (Py_buffer *[]){&fb, &ib, &st, &mb, &hb, &cb, &se}, 7);
    return res;
}

/* trace(fspec, ispec, state, model (T,) int64, human (T,) int64, present (T,) uint8,
 *       out (T, s + 2) float64, searches (ns,) int64 in/out): tracker row 0 consumes every root
 *       in order (human evidence where present[i]) and after root i writes its 2 ns bounds and its
 *       h-interval (lo, hi) into out[i]; it never stops (the caller classifies the trace). */
static PyObject *py_trace(PyObject *self, PyObject *args) {
    Py_buffer fb, ib, st, mb, hb, pb, ob, se;
    Spec sp = {0};
    Py_ssize_t rows;
    if (!PyArg_ParseTuple(args, "y*y*w*y*y*y*w*w*", &fb, &ib, &st, &mb, &hb, &pb, &ob, &se))
        return NULL;
    PyObject *res = NULL;
    if (unpack(&sp, &fb, &ib) < 0 || check_state(&sp, &st, &rows) < 0) goto done;
    if (sp.mode == 0 || rows < 1) {
        PyErr_SetString(PyExc_ValueError, "trace: the state is not a tracker's");
        goto done;
    }
    if (alloc_scratch(&sp) < 0) goto done;
    const Py_ssize_t horizon = mb.len / (Py_ssize_t)sizeof(int64_t);
    const Py_ssize_t width = sp.s + 2;
    if (mb.len != horizon * (Py_ssize_t)sizeof(int64_t) || hb.len != mb.len || pb.len != horizon ||
        ob.len != horizon * width * (Py_ssize_t)sizeof(double) ||
        se.len != sp.ns * (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "trace: array sizes do not match the state");
        goto done;
    }
    const int64_t *mi = (const int64_t *)mb.buf, *hi = (const int64_t *)hb.buf;
    const uint8_t *pr = (const uint8_t *)pb.buf;
    for (Py_ssize_t i = 0; i < horizon; i++) {
        if (mi[i] < 0 || mi[i] >= sp.nm || (pr[i] && (hi[i] < 0 || hi[i] >= sp.nh))) {
            PyErr_Format(PyExc_ValueError, "trace: root %zd is off the support", i);
            goto done;
        }
    }
    double *row = (double *)st.buf, *out = (double *)ob.buf;
    int64_t *searches = (int64_t *)se.buf;
    Py_BEGIN_ALLOW_THREADS;
    for (Py_ssize_t i = 0; i < horizon; i++) {
        int any = observe(&sp, row, 0, mi[i]);
        searches[0] += any;
        if (pr[i]) {
            int mh = observe(&sp, row, 1, hi[i]);
            searches[1] += mh;
            any |= mh;
            if (sp.mode == 2) {
                int md = observe(&sp, row, 2, sp.dflat[mi[i] * sp.nh + hi[i]]);
                searches[2] += md;
                any |= md;
            }
        }
        row[sp.o_h + 3] += 1.0;
        if (any) refresh(&sp, row);
        double *o = out + i * width;
        for (int q = 0; q < sp.s; q++) o[q] = row[sp.o_b + q];
        o[sp.s] = row[sp.o_h];
        o[sp.s + 1] = row[sp.o_h + 1];
    }
    Py_END_ALLOW_THREADS;
    res = Py_None;
    Py_INCREF(res);
done:
    release(&sp, (Py_buffer *[]){&fb, &ib, &st, &mb, &hb, &pb, &ob, &se}, 8);
    return res;
}

/* ------------------------------------------------------------------------------------------ */
/* plug-in and blend bets: verdictpack.core._adaptive_batch's _PlugBank, one row at a time      */
/* ------------------------------------------------------------------------------------------ */

/* A plug-in bank's state (the Python arrays, C order; R replicates, n streams, K grid bets):
 * values[nv] of stream j; xi (R, W) int32 and bets (R, W) of stream j, the first t[j, r] entries
 * the history of row r; t, sums, devs (n, R); counts (nv, R) of stream j; b, kp, ks (2n, R): the
 * bound, the plug-in log capital at it and its slope; wg, gg (2n, K, R): the grid's log-wealth
 * per bet at the bound and its slope (blend); lam, logw (K). */
typedef struct {
    const double *values, *lam, *logw;
    int32_t *xi;
    double *bets, *t, *sums, *devs, *counts, *b, *kp, *ks, *wg, *gg;
    Py_ssize_t nv, r, w, k, n, j;
    double logc, cap;
    double horizon; /* the horizon bets' design N (plug_observe); 0: the plug-in's i log(1 + i) */
    int blend;
} Plug;

#define PLUG_BLOCK 16
#define PLUG_OUTWARD 1e-12 /* the scalar class's outward margin */
#define PLUG_CLOSE 2e-13   /* a search stops once its bracket is this narrow */
#define PLUG_NUDGE 1e-13   /* a step below half of this becomes this step across the root */
#define PLUG_ITER 200

/* The plug-in log capital of row r's history at m (sign sg) and its slope in m. The factors
 * u >= 1 - cap > 0 of a block multiply into one log (a block with a huge factor, m near 0 or 1:
 * its logs one by one); four lanes keep the chains independent. */
static void plug_row(const Plug *pg, Py_ssize_t r, double m, double sg, double *val,
                     double *slope) {
    const Py_ssize_t len = (Py_ssize_t)pg->t[pg->j * pg->r + r];
    const int32_t *xr = pg->xi + r * pg->w;
    const double *br = pg->bets + r * pg->w, *values = pg->values;
    const double room = sg > 0 ? m : 1.0 - m, lim = room > 0 ? pg->cap / room : INFINITY;
    double v = 0.0, d, dl[4] = {0.0, 0.0, 0.0, 0.0};
    Py_ssize_t q = 0;
    for (; q + PLUG_BLOCK <= len; q += PLUG_BLOCK) {
        double pl[4] = {1.0, 1.0, 1.0, 1.0};
        for (int e = 0; e < PLUG_BLOCK; e++) {
            const double x = values[xr[q + e]], b = br[q + e];
            const double lam = b > lim ? lim : b, u = sg * lam * (x - m) + 1.0;
            pl[e & 3] *= u;
            dl[e & 3] += (b > lim ? lam * (sg > 0 ? x : 1.0 - x) / room : b) / u;
        }
        const double prod = (pl[0] * pl[1]) * (pl[2] * pl[3]);
        if (prod <= DBL_MAX) {
            v += log(prod);
            continue;
        }
        for (int e = 0; e < PLUG_BLOCK; e++) {
            const double x = values[xr[q + e]], b = br[q + e];
            v += log1p(sg * (b > lim ? lim : b) * (x - m));
        }
    }
    d = (dl[0] + dl[1]) + (dl[2] + dl[3]);
    for (; q < len; q++) {
        const double x = values[xr[q]], b = br[q];
        const double lam = b > lim ? lim : b, f = sg * lam * (x - m);
        v += log1p(f);
        d += (b > lim ? lam * (sg > 0 ? x : 1.0 - x) / room : b) / (f + 1.0);
    }
    *val = v;
    *slope = -sg * d;
}

/* The grid's log-wealth per bet at m from row r's counts, and its slope (K each). */
static void plug_grid(const Plug *pg, Py_ssize_t r, double m, double sg, double *w, double *g) {
    double u[64], lg[64], c[64]; /* the values seen, 64 at a time, their logs by vlog */
    for (Py_ssize_t k = 0; k < pg->k; k++) w[k] = g[k] = 0.0;
    for (Py_ssize_t v0 = 0; v0 < pg->nv; v0 += 64) {
        const Py_ssize_t v1 = pg->nv - v0 < 64 ? pg->nv : v0 + 64;
        for (Py_ssize_t k = 0; k < pg->k; k++) {
            const double sl = sg * pg->lam[k];
            int n = 0;
            for (Py_ssize_t v = v0; v < v1; v++) {
                if (pg->counts[v * pg->r + r] == 0.0) continue;
                c[n] = pg->counts[v * pg->r + r];
                u[n++] = 1.0 + sl * (pg->values[v] - m);
            }
            vlog(u, lg, n);
            for (int i = 0; i < n; i++) {
                w[k] += lg[i] * c[i];
                g[k] += (-sl / u[i]) * c[i];
            }
        }
    }
}

static double logaddexp(double a, double b) {
    if (a == b) return a + M_LN2;
    const double d = a - b;
    return d > 0 ? a + log1p(exp(-d)) : b + log1p(exp(d));
}

/* The blend log((K_grid + K_plug) / 2) and its slope from the grid's per-bet state (strides
 * `st` apart) and the plug-in half's value and slope. */
static void plug_mix(const Plug *pg, const double *w, const double *g, Py_ssize_t st, double val,
                     double slope, double *total, double *tslope) {
    double top = -INFINITY, z = 0.0, eg = 0.0;
    for (Py_ssize_t k = 0; k < pg->k; k++)
        if (w[k * st] + pg->logw[k] > top) top = w[k * st] + pg->logw[k];
    for (Py_ssize_t k = 0; k < pg->k; k++) {
        const double e = exp(w[k * st] + pg->logw[k] - top);
        z += e;
        eg += e * g[k * st];
    }
    const double grid = top + log(z), out = logaddexp(grid, val), share = exp(grid - out);
    *total = out - M_LN2;
    *tslope = share * eg / z + (1.0 - share) * slope;
}

/* log K(m) of row r's bets and its slope, and those of the plug-in half alone. */
static void plug_eval(const Plug *pg, Py_ssize_t r, double m, double sg, double *out) {
    plug_row(pg, r, m, sg, &out[2], &out[3]);
    out[0] = out[2];
    out[1] = out[3];
    if (pg->blend) {
        double w[MAX_K], g[MAX_K];
        plug_grid(pg, r, m, sg, w, g);
        plug_mix(pg, w, g, 1, out[2], out[3], &out[0], &out[1]);
    }
}

/* Move bound p of row r, whose capital at it reached 1/a: safeguarded Newton on the log capital
 * inside the bracket [rejected end, accepted end], a nudge of PLUG_NUDGE across the root once a
 * step falls below half of it (the Python docstring of _adaptive_batch). */
static void plug_search(const Plug *pg, Py_ssize_t p, Py_ssize_t r) {
    const Py_ssize_t i = p * pg->r + r, side = p % 2, kst = pg->r, kw = p * pg->k * pg->r + r;
    const double sg = side == 0 ? 1.0 : -1.0, logc = pg->logc, far = side == 0 ? 1.0 : 0.0;
    const double start = pg->b[i];
    double pv = pg->kp[i], ps = pg->ks[i], val = pv, slope = ps, ev[4];
    if (pg->blend) plug_mix(pg, pg->wg + kw, pg->gg + kw, kst, pv, ps, &val, &slope);
    double rej = start, acc = far, m = start, h = val - logc, d = slope;
    double older = fabs(acc - rej), last = older;
    for (int it = 0; it < PLUG_ITER; it++) {
        const double lo = rej < acc ? rej : acc, hi = rej < acc ? acc : rej;
        const double mid = 0.5 * (lo + hi);
        if (hi - lo <= PLUG_CLOSE || mid == lo || mid == hi) break;
        double step = -h / d;
        const double across = h >= 0.0 ? acc - rej : rej - acc;
        const int tiny = fabs(step) < 0.5 * PLUG_NUDGE, slow = fabs(step) > 0.5 * older;
        if (tiny) step = across > 0 ? PLUG_NUDGE : (across < 0 ? -PLUG_NUDGE : 0.0);
        double cand = m + step;
        if (!(isfinite(cand) && cand > lo && cand < hi && (tiny || !slow))) cand = mid;
        older = last;
        last = fabs(cand - m);
        plug_eval(pg, r, cand, sg, ev);
        m = cand;
        h = ev[0] - logc;
        d = ev[1];
        if (ev[0] >= logc) {
            rej = cand;
            pv = ev[2];
            ps = ev[3];
        } else {
            acc = cand;
        }
    }
    double nb = side == 0 ? fmax(rej - PLUG_OUTWARD, start) : fmin(rej + PLUG_OUTWARD, start);
    /* the capital at the new bound, a hair from the rejected end: first order suffices */
    pg->kp[i] = pv + ps * (nb - rej);
    pg->ks[i] = ps;
    if (fabs(rej - far) <= 2.0 * PLUG_CLOSE) { /* is the far end itself rejected (crossed)? */
        plug_eval(pg, r, far, sg, ev);
        if (ev[0] >= logc) {
            nb = far + (side == 0 ? PLUG_OUTWARD : -PLUG_OUTWARD);
            plug_row(pg, r, nb, sg, &pg->kp[i], &pg->ks[i]);
        }
    }
    pg->b[i] = nb;
    if (pg->blend) {
        double w[MAX_K], g[MAX_K];
        plug_grid(pg, r, nb, sg, w, g);
        for (Py_ssize_t k = 0; k < pg->k; k++) {
            pg->wg[kw + k * kst] = w[k];
            pg->gg[kw + k * kst] = g[k];
        }
    }
}

/* Row r of stream j observes values[vi]; whether a bound was searched. */
static int plug_observe(const Plug *pg, Py_ssize_t r, int64_t vi) {
    const Py_ssize_t jr = pg->j * pg->r + r;
    const double x = pg->values[vi], n = pg->t[jr] + 1.0;
    const double var = n == 1.0 ? 0.25 : (0.25 + pg->devs[jr]) / n;
    const double scale = pg->horizon > 0.0 ? pg->horizon : n * log1p(n);
    const double bet = sqrt(2.0 * pg->logc / (var * scale));
    const Py_ssize_t col = (Py_ssize_t)(n - 1.0);
    pg->xi[r * pg->w + col] = (int32_t)vi;
    pg->bets[r * pg->w + col] = bet;
    const double total = pg->sums[jr] + x;
    pg->sums[jr] = total;
    const double dev = x - (0.5 + total) / (n + 1.0);
    pg->devs[jr] += dev * dev;
    pg->t[jr] = n;
    pg->counts[vi * pg->r + r] += 1.0;
    int moved = 0;
    for (Py_ssize_t side = 0; side < 2; side++) {
        const Py_ssize_t p = 2 * pg->j + side, i = p * pg->r + r, kw = p * pg->k * pg->r + r;
        const double sg = side == 0 ? 1.0 : -1.0, b = pg->b[i];
        const double room = sg > 0 ? b : 1.0 - b, lim = room > 0 ? pg->cap / room : INFINITY;
        const double lam = bet > lim ? lim : bet, f = sg * lam * (x - b);
        pg->kp[i] += log1p(f);
        pg->ks[i] += -sg * ((bet > lim ? lam * (sg > 0 ? x : 1.0 - x) / room : bet) / (f + 1.0));
        double cap = pg->kp[i], tslope;
        if (pg->blend) {
            for (Py_ssize_t k = 0; k < pg->k; k++) {
                const double q = sg * pg->lam[k] * (x - b);
                pg->wg[kw + k * pg->r] += log1p(q);
                pg->gg[kw + k * pg->r] -= sg * pg->lam[k] / (1.0 + q);
            }
            /* log sum_k w_k e^W_k <= max_k (W_k + log w_k) + log K: below 1/a, no mix needed */
            double top = -INFINITY;
            for (Py_ssize_t k = 0; k < pg->k; k++)
                if (pg->wg[kw + k * pg->r] + pg->logw[k] > top)
                    top = pg->wg[kw + k * pg->r] + pg->logw[k];
            if (fmax(top + log((double)pg->k), cap) >= pg->logc - 1e-9)
                plug_mix(pg, pg->wg + kw, pg->gg + kw, pg->r, cap, cap, &cap, &tslope);
        }
        if (cap >= pg->logc) {
            plug_search(pg, p, r);
            moved = 1;
        }
    }
    return moved;
}

/* The state tuple (values, xi, bets, t, sums, devs, counts, b, kp, ks, wg, gg, lam, logw) of
 * stream j into pg, its sizes checked. */
static int plug_unpack(Plug *pg, Py_buffer *bf, Py_ssize_t n, Py_ssize_t j, double logc,
                       double cap, int blend) {
    const Py_ssize_t D = (Py_ssize_t)sizeof(double);
    pg->nv = bf[0].len / D;
    pg->k = bf[12].len / D;
    pg->n = n;
    pg->j = j;
    pg->horizon = 0.0;
    pg->r = n > 0 ? bf[3].len / (n * D) : 0;
    pg->w = pg->r ? bf[1].len / (pg->r * (Py_ssize_t)sizeof(int32_t)) : 0;
    const Py_ssize_t rn = pg->r * n;
    if (n < 1 || j < 0 || j >= n || pg->k < 1 || pg->k > MAX_K || pg->nv < 1 || !(cap > 0.0) ||
        !(cap < 1.0) ||
        bf[1].len != pg->r * pg->w * (Py_ssize_t)sizeof(int32_t) ||
        bf[2].len != pg->r * pg->w * D || bf[3].len != rn * D || bf[4].len != rn * D ||
        bf[5].len != rn * D || bf[6].len != pg->nv * pg->r * D || bf[7].len != 2 * rn * D ||
        bf[8].len != 2 * rn * D || bf[9].len != 2 * rn * D ||
        bf[10].len != 2 * rn * pg->k * D || bf[11].len != 2 * rn * pg->k * D ||
        bf[13].len != pg->k * D) {
        PyErr_SetString(PyExc_ValueError, "plug: state sizes do not match");
        return -1;
    }
    pg->values = bf[0].buf;
    pg->xi = bf[1].buf;
    pg->bets = bf[2].buf;
    pg->t = bf[3].buf;
    pg->sums = bf[4].buf;
    pg->devs = bf[5].buf;
    pg->counts = bf[6].buf;
    pg->b = bf[7].buf;
    pg->kp = bf[8].buf;
    pg->ks = bf[9].buf;
    pg->wg = bf[10].buf;
    pg->gg = bf[11].buf;
    pg->lam = bf[12].buf;
    pg->logw = bf[13].buf;
    pg->logc = logc;
    pg->cap = cap;
    pg->blend = blend;
    /* xi is written here only (plug_observe, its indices checked): no history scan per call */
    for (Py_ssize_t r = 0; r < pg->r; r++) {
        const double t = pg->t[j * pg->r + r];
        if (!(t >= 0.0 && t <= (double)pg->w)) {
            PyErr_SetString(PyExc_ValueError, "plug: a history is longer than its buffer");
            return -1;
        }
    }
    return 0;
}

/* flat, not a nested tuple: getargs sizes its cleanup list by the top-level items */
#define PLUG_FMT "y*w*w*w*w*w*w*w*w*w*w*w*y*y*"
#define PLUG_BUFS(b)                                                                         \
    &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[6], &b[7], &b[8], &b[9], &b[10], &b[11],     \
        &b[12], &b[13]

/* plug_observe(*state, n, j, logc, cap, horizon, blend, rows, vidx, moved): rows[i] of stream j
 * observe values[vidx[i]] (their histories have room for it); moved[i] whether a bound was
 * searched. horizon > 0: the bets tuned to that design N; 0: the plug-in bets. */
static PyObject *py_plug_observe(PyObject *self, PyObject *args) {
    Py_buffer bf[14], rb, vb, mb;
    Py_ssize_t n, j;
    double logc, cap, horizon;
    int blend;
    if (!PyArg_ParseTuple(args, PLUG_FMT "nndddpy*y*w*", PLUG_BUFS(bf), &n, &j, &logc, &cap,
                          &horizon, &blend, &rb, &vb, &mb))
        return NULL;
    PyObject *res = NULL;
    Plug pg;
    if (plug_unpack(&pg, bf, n, j, logc, cap, blend) < 0) goto done;
    if (!(horizon >= 0.0) || isinf(horizon)) {
        PyErr_SetString(PyExc_ValueError, "plug_observe: horizon must be finite and >= 0");
        goto done;
    }
    pg.horizon = horizon;
    const Py_ssize_t nr = rb.len / (Py_ssize_t)sizeof(int64_t);
    const int64_t *rows = rb.buf, *vidx = vb.buf;
    if (vb.len != rb.len || mb.len != nr) {
        PyErr_SetString(PyExc_ValueError, "plug_observe: rows, vidx and moved differ in size");
        goto done;
    }
    for (Py_ssize_t i = 0; i < nr; i++) {
        if (rows[i] < 0 || rows[i] >= pg.r || vidx[i] < 0 || vidx[i] >= pg.nv ||
            pg.t[j * pg.r + rows[i]] >= (double)pg.w) {
            PyErr_Format(PyExc_ValueError, "plug_observe: entry %zd out of range", i);
            goto done;
        }
    }
    uint8_t *moved = mb.buf;
    Py_BEGIN_ALLOW_THREADS;
    for (Py_ssize_t i = 0; i < nr; i++) moved[i] = (uint8_t)plug_observe(&pg, rows[i], vidx[i]);
    Py_END_ALLOW_THREADS;
    res = Py_None;
    Py_INCREF(res);
done:
    for (int i = 0; i < 14; i++) PyBuffer_Release(&bf[i]);
    PyBuffer_Release(&rb);
    PyBuffer_Release(&vb);
    PyBuffer_Release(&mb);
    return res;
}

/* plug_log_e(*state, n, j, logc, cap, blend, side, m, out): log K of every row of stream j at
 * m[r] (side 0: the upper process, side 1: the lower). */
static PyObject *py_plug_log_e(PyObject *self, PyObject *args) {
    Py_buffer bf[14], mb, ob;
    Py_ssize_t n, j, side;
    double logc, cap;
    int blend;
    if (!PyArg_ParseTuple(args, PLUG_FMT "nnddpny*w*", PLUG_BUFS(bf), &n, &j, &logc, &cap, &blend,
                          &side, &mb, &ob))
        return NULL;
    PyObject *res = NULL;
    Plug pg;
    if (plug_unpack(&pg, bf, n, j, logc, cap, blend) < 0) goto done;
    if (mb.len != pg.r * (Py_ssize_t)sizeof(double) || ob.len != mb.len) {
        PyErr_SetString(PyExc_ValueError, "plug_log_e: m and out must have one entry per row");
        goto done;
    }
    const double *m = mb.buf;
    double *out = ob.buf, ev[4];
    for (Py_ssize_t r = 0; r < pg.r; r++) {
        plug_eval(&pg, r, m[r], side == 0 ? 1.0 : -1.0, ev);
        out[r] = ev[0];
    }
    res = Py_None;
    Py_INCREF(res);
done:
    for (int i = 0; i < 14; i++) PyBuffer_Release(&bf[i]);
    PyBuffer_Release(&mb);
    PyBuffer_Release(&ob);
    return res;
}

/* log_e(fspec, ispec, state, j, side, m, out): log E at m[r] of stream j of every row r, side 0
 * E+ (evidence above m) or 1 E- (below), from the counts: the exact evaluation the searches
 * use, with the kernel's own logs, so the number is the same on every machine (numpy's log,
 * exp and matrix products take a different path on a CPU with AVX-512). */
static PyObject *py_log_e(PyObject *self, PyObject *args) {
    Py_buffer fb, ib, st, mb, ob;
    Spec sp = {0};
    Py_ssize_t rows;
    int j, side;
    if (!PyArg_ParseTuple(args, "y*y*y*iiy*w*", &fb, &ib, &st, &j, &side, &mb, &ob)) return NULL;
    PyObject *res = NULL;
    if (unpack(&sp, &fb, &ib) < 0 || check_state(&sp, &st, &rows) < 0) goto done;
    if (alloc_scratch(&sp) < 0) goto done;
    if (j < 0 || j >= sp.ns || (side != 0 && side != 1) ||
        mb.len != rows * (Py_ssize_t)sizeof(double) || ob.len != mb.len) {
        PyErr_SetString(PyExc_ValueError, "log_e: a stream, a side 0 or 1, one m and out per row");
        goto done;
    }
    const double *m = mb.buf, *base = st.buf;
    double *out = ob.buf;
    for (Py_ssize_t r = 0; r < rows; r++)
        out[r] = log_e_at(&sp, base + r * sp.stride, j, side == 0 ? 1.0 : -1.0, m[r]);
    res = Py_None;
    Py_INCREF(res);
done:
    release(&sp, (Py_buffer *[]){&fb, &ib, &st, &mb, &ob}, 5);
    return res;
}

/* libm(which, x, out): out = f(x) element by element, f the C library's log, exp, log1p,
 * expm1, asin or sin (which = 0..5): the same bits on every machine of one C library, where
 * numpy's own float64 loops for these functions differ on a CPU with AVX-512 (core._libm);
 * which = 6: the kernel's own vlog, positive normal numbers only (exposed for its accuracy
 * test). */
NO_VECTORIZE static void apply_libm(int which, const double *x, double *out, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        const double v = x[i];
        switch (which) {
        case 0: out[i] = log(v); break;
        case 1: out[i] = exp(v); break;
        case 2: out[i] = log1p(v); break;
        case 3: out[i] = expm1(v); break;
        case 4: out[i] = asin(v); break;
        default: out[i] = sin(v); break;
        }
    }
}

static PyObject *py_libm(PyObject *self, PyObject *args) {
    Py_buffer xb, ob;
    int which;
    if (!PyArg_ParseTuple(args, "iy*w*", &which, &xb, &ob)) return NULL;
    PyObject *res = NULL;
    const Py_ssize_t n = xb.len / (Py_ssize_t)sizeof(double);
    const double *x = (const double *)xb.buf;
    if (which < 0 || which > 6 || ob.len != xb.len || xb.len % (Py_ssize_t)sizeof(double) ||
        n > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "libm: which in 0..6, x and out float64 of one size");
        goto done;
    }
    if (which < 6) {
        apply_libm(which, x, ob.buf, n);
    } else {
        for (Py_ssize_t i = 0; i < n; i++) {
            if (!(x[i] >= DBL_MIN && x[i] <= DBL_MAX)) {
                PyErr_Format(PyExc_ValueError, "libm: x[%zd] is not a positive normal number", i);
                goto done;
            }
        }
        vlog(x, (double *)ob.buf, (int)n);
    }
    res = Py_None;
    Py_INCREF(res);
done:
    PyBuffer_Release(&xb);
    PyBuffer_Release(&ob);
    return res;
}

static PyMethodDef methods[] = {
    {"plug_observe", py_plug_observe, METH_VARARGS,
     "plug_observe(*state, n, j, logc, cap, blend, rows, vidx, moved)"},
    {"plug_log_e", py_plug_log_e, METH_VARARGS,
     "plug_log_e(*state, n, j, logc, cap, blend, side, m, out)"},
    {"log_e", py_log_e, METH_VARARGS, "log_e(fspec, ispec, state, j, side, m, out)"},
    {"libm", py_libm, METH_VARARGS,
     "libm(which, x, out): the C library's log, exp, log1p, expm1, asin, sin, or vlog, of x"},
    {"layout", py_layout, METH_VARARGS, "layout(ispec) -> offsets of a state row"},
    {"init", py_init, METH_VARARGS, "init(fspec, ispec, state): fresh rows"},
    {"step", py_step, METH_VARARGS, "step(fspec, ispec, state, idx, act, moved, searches)"},
    {"run", py_run, METH_VARARGS, "run(fspec, ispec, state, model, human, cap, codes, searches)"},
    {"trace", py_trace, METH_VARARGS,
     "trace(fspec, ispec, state, model, human, present, out, searches)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "verdictpack.core._kernel",
    "The compiled batch engine of verdictpack's sequential core (private; see _sequential).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__kernel(void) { return PyModule_Create(&module); }
