/* recurrent.h — one layer of an LSTM, GRU or tanh RNN run over a window of T steps for
 * B sequences, forward and backward through time, with PyTorch's semantics and parameter
 * layout (pytorch.org/docs/stable/generated/torch.nn.LSTM.html, .GRU, .RNN):
 *   LSTM gates i,f,g,o:  c' = f*c + i*g,  h' = o*tanh(c')
 *   GRU gates r,z,n:     n = tanh(W_in x + b_in + r*(W_hn h + b_hn)),  h' = (1-z)*n + z*h
 *   RNN:                 h' = tanh(W_ih x + b_ih + W_hh h + b_hh)
 * weight_ih (G*H, C_in), weight_hh (G*H, H), bias_ih, bias_hh (G*H), G = 4, 3, 1.
 * Layout here is TIME-major (T,B,C): step t is one contiguous (B,C) block, so the input
 * projection of all T steps is one sgemm and each step's recurrent projection another.
 * Not a multi-layer stack, not dropout, not an allocator: the model stacks layers and
 * owns every buffer. Backward is truncated at the window: no gradient reaches h0/c0. */
#ifndef LM_RECURRENT_H
#define LM_RECURRENT_H

enum { RECURRENT_LSTM, RECURRENT_GRU, RECURRENT_RNN };

/* Gates per cell: 4 (LSTM), 3 (GRU), 1 (RNN). */
int recurrent_gates(int kind);

typedef struct {
    const float *w_ih;   /* (G*H, C_in) */
    const float *w_hh;   /* (G*H, H) */
    const float *b_ih;   /* (G*H) */
    const float *b_hh;   /* (G*H) */
} RecurrentWeights;

typedef struct {         /* gradients, same shapes as RecurrentWeights; added into */
    float *w_ih, *w_hh, *b_ih, *b_hh;
} RecurrentGrads;

typedef struct {         /* what forward saves for backward */
    float *h;            /* (T,B,H) hidden states (the layer's output) */
    float *c;            /* (T,B,H) LSTM cell states; NULL for GRU/RNN */
    float *act;          /* (T,B,G*H) gate activations (LSTM i,f,g,o; GRU r,z,n); NULL for RNN */
    float *hn;           /* (T,B,H) GRU: W_hn h_{t-1} + b_hn; NULL otherwise */
} RecurrentActs;

/* Runs T steps from (h0, c0) and fills a (a->h[T-1], a->c[T-1] are the final state).
 * c0 is used by LSTM only. scratch: (B, G*H). Never fails. */
void recurrent_forward(int kind, RecurrentActs *a,
                       float *scratch,     /* (B, G*H) */
                       const float *x,     /* (T,B,C_in) */
                       const float *h0,    /* (B,H) */
                       const float *c0,    /* (B,H) LSTM, else ignored */
                       const RecurrentWeights *w, int T, int B, int C_in, int H);

/* Backpropagation through time of recurrent_forward, given dh_out (T,B,H), the gradient
 * of the loss with respect to every a->h. ADDS into g and into dx (dx may be NULL to skip
 * it). da_ih, da_hh: (T,B,G*H) scratch (da_hh is used by the GRU only and may be NULL
 * for LSTM/RNN); carry: (2,B,H) scratch. Nothing flows into h0/c0. Never fails. */
void recurrent_backward(int kind,
                        float *dx,           /* (T,B,C_in) or NULL */
                        RecurrentGrads *g,
                        float *da_ih,        /* (T,B,G*H) scratch */
                        float *da_hh,        /* (T,B,G*H) scratch, GRU only */
                        float *carry,        /* (2,B,H) scratch */
                        const float *dh_out, /* (T,B,H) */
                        const RecurrentActs *a,
                        const float *x,      /* (T,B,C_in) */
                        const float *h0,     /* (B,H) */
                        const float *c0,     /* (B,H) LSTM, else ignored */
                        const RecurrentWeights *w, int T, int B, int C_in, int H);

#endif
