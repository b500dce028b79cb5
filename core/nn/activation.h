/* activation.h — elementwise activations (ReLU, exact-erf GELU) with their backward,
 * and the residual add. Operate on flat arrays of n floats; loops vectorise.
 * linear.h fuses them with the feed-forward's products; no tanh-approximate GELU. */
#ifndef LM_ACTIVATION_H
#define LM_ACTIVATION_H

/* out = max(inp, 0). out may alias inp. Never fails. */
void relu_forward(float *out,       /* (n) */
                  const float *inp, /* (n) */
                  long n);

/* dinp += dout * (out > 0), from the saved forward output. Never fails. */
void relu_backward(float *dinp,       /* (n) */
                   const float *dout, /* (n) */
                   const float *out,  /* (n) relu_forward output */
                   long n);

/* out = x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), as nn.GELU() (approximate='none'),
 * with erf evaluated as torch's CPU kernel does (|error| <= 1.5e-7; out within 5e-7 of
 * torch for x in [-10, 10]). out may alias inp. Never fails. */
void gelu_forward(float *out,       /* (n) */
                  const float *inp, /* (n) */
                  long n);

/* dinp += dout * (Phi(x) + x phi(x)), x the forward input. Never fails. */
void gelu_backward(float *dinp,       /* (n) */
                   const float *dout, /* (n) */
                   const float *inp,  /* (n) gelu_forward input */
                   long n);

/* d *= Phi(x) + x phi(x): gelu_backward's product, in place (the fused feed-forward's
 * backward, linear.h). Never fails. */
void gelu_grad_mul(float *d,       /* (n) */
                   const float *x, /* (n) gelu_forward input */
                   long n);

/* out = a + b. out may alias a or b. Never fails. */
void residual_forward(float *out,     /* (n) */
                      const float *a, /* (n) */
                      const float *b, /* (n) */
                      long n);

/* acc += x. Never fails. */
void add_inplace(float *acc,     /* (n) */
                 const float *x, /* (n) */
                 long n);

#endif
