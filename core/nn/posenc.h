/* posenc.h — position encodings added to (B,T,C) activations: the fixed sinusoidal table
 * of the PyTorch word_language_model example (and "Attention Is All You Need"), or a
 * learned (T_max, C) table whose gradient posenc_backward accumulates.
 * Not rotary or relative encodings. */
#ifndef LM_POSENC_H
#define LM_POSENC_H

/* Fills table (T, C) with pe[t,2i] = sin(t*div_i), pe[t,2i+1] = cos(t*div_i),
 * div_i = exp(2i * (-ln(10000)/C)), computed in float32 exactly as torch does, so it
 * matches torch to ~1e-6 (see posenc.c for the measured error). Odd C: the last column
 * is the sine. Never fails. */
void posenc_sinusoid(float *table, /* (T, C) */
                     int T, int C);

/* x[b,t,:] += table[t0 + t, :] for positions t0 .. t0+T-1 (table must have that many
 * rows). Never fails. */
void posenc_add(float *x,            /* (B, T, C) */
                const float *table,  /* (>= t0+T, C) */
                int B, int T, int C, int t0);

/* Learned positions: dtable[t0 + t, :] += sum over b of dx[b, t, :]. Never fails. */
void posenc_backward(float *dtable,     /* (>= t0+T, C) */
                     const float *dx,   /* (B, T, C) */
                     int B, int T, int C, int t0);

#endif
