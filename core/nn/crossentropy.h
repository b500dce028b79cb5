/* crossentropy.h — fused, numerically stable softmax + cross-entropy over rows of logits
 * (max-subtract, log-sum-exp), its gradient, and a plain row softmax for sampling.
 * Matches nn.CrossEntropyLoss(reduction='sum', ignore_index=<negative>).
 * Not a loss framework: no reductions other than the sum, no label smoothing. */
#ifndef LM_CROSSENTROPY_H
#define LM_CROSSENTROPY_H

/* Returns the SUM over rows n with targets[n] >= 0 of -log softmax(logits[n])[targets[n]],
 * accumulated in double. losses, when not NULL, gets each row's loss (0 for ignored rows).
 * Targets >= 0 must be < V. Never fails. */
double crossentropy_forward(float *losses,        /* (N) or NULL */
                            const float *logits,  /* (N, V) */
                            const int *targets,   /* (N), < 0 = ignored */
                            int N, int V);

/* Same return value as crossentropy_forward, and OVERWRITES (does not add)
 * dlogits[n,:] = (softmax(logits[n]) - onehot(targets[n])) * scale, with zero rows for
 * ignored targets. dlogits may alias logits (in place, so a large vocabulary needs one
 * (N,V) buffer). Never fails. */
double crossentropy_forward_backward(float *dlogits,       /* (N, V), may alias logits */
                                     const float *logits,  /* (N, V) */
                                     const int *targets,   /* (N), < 0 = ignored */
                                     int N, int V, float scale);

/* probs[n,:] = softmax(logits[n,:] / temperature); temperature > 0. probs may alias
 * logits. Never fails. */
void softmax_forward(float *probs,        /* (N, V), may alias logits */
                     const float *logits, /* (N, V) */
                     int N, int V, float temperature);

#endif
