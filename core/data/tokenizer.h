/* tokenizer.h — text <-> token ids: characters (the seed notebook's sorted(set(text))),
 * words (PyTorch's word_language_model: whitespace-split words plus <eos> per line),
 * byte-level BPE (bpe.c), BERT's WordPiece over a user-given vocab.txt, torchtext's
 * basic_english words, and GPT-2's byte-level BPE over its fixed vocabulary (tok_gpt2.c). Trained on a text, saved as JSON next to checkpoints, and
 * identified by a hash so a checkpoint is never paired with the wrong vocabulary.
 * One file per kind (tok_<kind>.c) behind this handle; docs/architecture.md tells how to
 * add one. Not a general normaliser: only WordPiece and basic_english lowercase. */
#ifndef LM_TOKENIZER_H
#define LM_TOKENIZER_H

#include "config.h"

#include <stddef.h>

/* TokenizerKind (TOKENIZER_CHAR, ...): config.h, from core/base/tokenizers.def. */

/* What a tokenizer is trained with besides the text (tokenizer_train_opts). */
typedef struct {
    int vocab_size;          /* word, bpe, basic_english, wordpiece vocab_from_train: the limit */
    const char *vocab_path;  /* wordpiece: BERT's vocab.txt (one piece a line; id = line - 1) */
    int lowercase;           /* wordpiece: BERT's uncased normalisation (lowercase, strip accents) */
    int vocab_from_train;    /* wordpiece: the reference WikiText pipeline (see below) */
} TokenizerOptions;

typedef struct Tokenizer Tokenizer;   /* heap object: tokenizer_train / _load, _destroy */

#define TOKENIZER_FNV_SEED 0xcbf29ce484222325ULL

/* A name of core/base/tokenizers.def ("char", "word", ...) -> *kind. 0 ok, -1 unknown
 * name (*kind untouched). */
int tokenizer_kind_parse(const char *name, TokenizerKind *kind);

/* The name of a kind ("char", "word", ...; "?" for a bad value). */
const char *tokenizer_kind_name(TokenizerKind kind);

/* Builds a tokenizer from text (len bytes, any bytes).
 * char: the vocabulary is the sorted distinct code points of the text, as Python's
 *   sorted(set(text)), so ids agree with the seed for UTF-8 text; a byte that is not part
 *   of valid UTF-8 becomes its own symbol, sorted as Python's surrogateescape would
 *   (U+DC80 + byte - 0x80). vocab_size is ignored.
 * word: words split at ASCII whitespace (space, \t, \n, \v, \f, \r; other Unicode spaces
 *   are word characters), "<eos>" at the end of each line, ids in order of first
 *   appearance (PyTorch's Dictionary). vocab_size > 0 keeps <eos> and the most frequent
 *   words (ties: earliest first) so that with "<unk>" there are vocab_size tokens;
 *   0 keeps all. "<unk>" and "<eos>" are always present (appended when absent).
 * bpe: byte-level BPE with vocab_size - 256 merges (vocab_size >= 256); may stop earlier
 *   when no pair occurs twice (tokenizer_vocab_size tells).
 * gpt2: not trained (text unused): GPT-2's vocab.bpe and encoder.json from opt->vocab_path
 *   (a folder holding both, or the path of either with the other beside it; Hugging Face's
 *   merges.txt / vocab.json names too) or, when NULL or empty, gpt2/ in $LMLAB_DATA or
 *   the bundled data folder; vocab_size must be 0 or the files' 50257. LM_EIO (a file
 *   missing), LM_EFORMAT (a malformed file, or the two not a pair).
 * LM_OK, or LM_EARG (bad vocab_size, or an empty text for char) / LM_ENOMEM with a message in err (LM_ERR_LEN). */
int tokenizer_train(TokenizerKind kind, const char *text, size_t len, int vocab_size,
                    Tokenizer **out, char *err);

/* tokenizer_train with every option; opt->vocab_size as vocab_size above, and:
 * wordpiece: BERT's BasicTokenizer + WordpieceTokenizer (tok_wordpiece.c) over the pieces
 *   of opt->vocab_path (which must hold [UNK]); lowercase: lowercase and strip accents
 *   first (uncased models). Ids are the vocab.txt lines; the text is not used.
 *   vocab_from_train: the reference WikiText-2 run instead (torchtext Field(tokenize=
 *   BertTokenizer.tokenize, lower=True) + build_vocab): the pieces are lowercased, "<eos>"
 *   ends each line, and the vocabulary is <unk>, <pad>, <sos>, <eos>, then the pieces of
 *   text by falling count, ties in code point order (vocab_size > 0: at most that many).
 * basic_english: torchtext's get_tokenizer("basic_english") (lowercase; ' . , ( ) ! ?
 *   split off; " ; : dropped) and build_vocab_from_iterator(specials=["<unk>"]): <unk>,
 *   then the words by falling count, ties in code point order. No <eos>.
 * LM_EARG (bad option), LM_EIO (vocab file unreadable), LM_EFORMAT (bad vocab file). */
int tokenizer_train_opts(TokenizerKind kind, const char *text, size_t len,
                         const TokenizerOptions *opt, Tokenizer **out, char *err);

/* Where a vocabulary's training sample of the first n bytes of text ends: n, or moved
 * back after the last ASCII whitespace when n falls inside a word (`next` is the byte
 * after the cut, -1 when the text ends at n), so that no fragment of a word takes a slot.
 * A sample of one word is left as it is. */
size_t tokenizer_sample_end(const char *text, size_t n, int next);

/* Frees the tokenizer; NULL is a no-op. */
void tokenizer_destroy(Tokenizer *t);

TokenizerKind tokenizer_kind(const Tokenizer *t);
int tokenizer_vocab_size(const Tokenizer *t);

/* Encodes len bytes into *ids (malloc'd, caller frees; non-NULL even when *n is 0).
 * char: a character outside the vocabulary -> LM_EARG naming it and its byte offset;
 * word: unknown words -> <unk>; bpe, gpt2: exact for any bytes (gpt2: "<|endoftext|>" in
 * the text is text, as tiktoken's encode_ordinary). LM_ENOMEM when out of memory.
 * Reads t only, so several threads may encode with one tokenizer. */
int tokenizer_encode(const Tokenizer *t, const char *text, size_t len, int **ids, size_t *n,
                     char *err);

/* Encodes a prompt as typed: as tokenizer_encode, except that text not ending in '\n'
 * gets no "<eos>" after it (word and wordpiece end every line of a corpus with one, the
 * last unterminated line too; a prompt's last line is not ended). What `sample`,
 * `tokenize`, `coeffs` and `eval` of a typed text encode with. */
int tokenizer_encode_prompt(const Tokenizer *t, const char *text, size_t len, int **ids,
                            size_t *n, char *err);

/* The stored text of token id as it is in the vocabulary (no space added), owned by t;
 * its length in *len. NULL for an invalid id. */
const char *tokenizer_token_bytes(const Tokenizer *t, int id, size_t *len);

/* The bytes of token id (word, basic_english: the word and a space, <eos> -> "\n";
 * wordpiece: a space and the piece, "##x" -> "x"), for streaming
 * output: copies min(length, cap) bytes into buf, adds a NUL when there is room, and
 * returns the token's length; -1 for an invalid id. */
int tokenizer_decode_token(const Tokenizer *t, int id, char *buf, size_t cap);

/* The text of n ids, malloc'd and NUL-terminated (caller frees); invalid ids are skipped.
 * NULL when out of memory. */
char *tokenizer_decode(const Tokenizer *t, const int *ids, size_t n);

/* A printable form of one token for displays, owned by t: control characters and bytes
 * that are not UTF-8 escaped (\n, \t, \x00), backslash doubled; "<invalid>" for a bad id. */
const char *tokenizer_token_text(const Tokenizer *t, int id);

/* Serialises the vocabulary to a compact JSON string (malloc'd, caller frees); NULL when
 * out of memory. {"format":"lmlab-tokenizer","version":1,"kind":...,"vocab_size":...}
 * plus "chars" (code points), "words" (strings; byte arrays for non-UTF-8 words),
 * "merges" ([left, right] pairs) or, for wordpiece, "pieces" and its options. */
char *tokenizer_save(const Tokenizer *t);

/* Rebuilds a tokenizer from tokenizer_save's JSON, validating everything (format, kind,
 * sizes, sorted distinct characters, distinct words with <unk> and <eos>, merges that
 * refer to existing tokens). LM_OK, LM_EFORMAT with a message naming the fault, or
 * LM_ENOMEM. */
int tokenizer_load(const char *json, Tokenizer **out, char *err);

/* The id of the tokenizer's end-of-text token, the separator between documents (gpt2:
 * "<|endoftext|>" = 50256), or -1 when the kind has none (word's "<eos>" ends lines and
 * is the tokenizer's own business). */
int tokenizer_eot(const Tokenizer *t);

/* Identity of the vocabulary: 64-bit FNV-1a of the tokenizer_save text. */
unsigned long long tokenizer_hash(const Tokenizer *t);

/* 64-bit FNV-1a of n bytes continuing from h (start with TOKENIZER_FNV_SEED). */
unsigned long long tokenizer_fnv1a(const void *data, size_t n, unsigned long long h);

/* Number of code points in len bytes of text, counting each byte that is not valid
 * UTF-8 as one (the char tokenizer's count of symbols). */
size_t tokenizer_count_chars(const char *text, size_t len);

/* The separator between a prompt and the first token generated after it, by the
 * tokenizer's own rule: word tokens are joined by a space, so " " when prompt is not
 * empty and does not end in whitespace; "" for char and bpe (their tokens carry their
 * own spacing). A static string. */
const char *tokenizer_join(const Tokenizer *t, const char *prompt);

#endif
