/* 2^f for |f| <= 1/2 as a polynomial in f: the Taylor series of e^(f ln 2),
 * coefficient k = (ln 2)^k / k!. Every ISA's exp2 splits x = n + f, evaluates
 * this polynomial by Horner's rule and scales by 2^n. Degree 7 (all of them)
 * has a relative error below 1e-8 before rounding; a path that rounds p to
 * bf16 right after (relative error 2^-9) can stop at degree 4 (< 5e-5). */
#ifndef XATTN_ISA_EXP2_POLY_H
#define XATTN_ISA_EXP2_POLY_H

#define XATTN_EXP2_C7 1.5252733804059840e-05f
#define XATTN_EXP2_C6 1.5403530393381608e-04f
#define XATTN_EXP2_C5 1.3333558146428443e-03f
#define XATTN_EXP2_C4 9.6181291076284772e-03f
#define XATTN_EXP2_C3 5.5504108664821580e-02f
#define XATTN_EXP2_C2 2.4022650695910071e-01f
#define XATTN_EXP2_C1 6.9314718055994531e-01f
#define XATTN_EXP2_C0 1.0f

/* 2^f for 0 <= f < 1, degree 3, fitted for the least maximum relative error
 * (7.5e-5, well under bf16's 2^-9): the amx softmax takes f = x - floor(x)
 * (one vreduceps) and scales by 2^floor(x) with vscalefps, which floors its
 * exponent operand itself, so no rounding, subtraction or clamp is needed. */
#define XATTN_EXP2_FLOOR_C3 7.802387327e-02f
#define XATTN_EXP2_FLOOR_C2 2.260669321e-01f
#define XATTN_EXP2_FLOOR_C1 6.958342791e-01f
#define XATTN_EXP2_FLOOR_C0 9.999250770e-01f

/* Inputs below this underflow 2^x to 0 in f32 anyway; clamping there keeps
 * -inf (masked scores) out of the polynomial. */
#define XATTN_EXP2_MIN_INPUT (-160.0f)

#endif
