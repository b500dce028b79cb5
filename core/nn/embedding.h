/* embedding.h — token embedding lookup (nn.Embedding) with an optional scale, e.g.
 * sqrt(C) as in the PyTorch transformer examples, and its backward.
 * Not bounds-checked: token ids are validated once by the dataset/tokenizer. */
#ifndef LM_EMBEDDING_H
#define LM_EMBEDDING_H

/* out[n,:] = wte[tokens[n],:] * scale. Every tokens[n] must be in [0, V). Never fails. */
void embedding_forward(float *out,        /* (N, C) */
                       const int *tokens, /* (N) */
                       const float *wte,  /* (V, C) */
                       float scale, int N, int C);

/* dwte[tokens[n],:] += dout[n,:] * scale (repeated tokens accumulate). Never fails. */
void embedding_backward(float *dwte,       /* (V, C) */
                        const float *dout, /* (N, C) */
                        const int *tokens, /* (N) */
                        float scale, int N, int C);

#endif
