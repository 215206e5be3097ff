#!/usr/bin/env python3
"""Turn a sentencepiece model (.model) into llama2.c's tokenizer.bin (docs/formats.md).

    python3 tools/tokenizer_bin.py tok512.model -o tok512.bin

Needs the sentencepiece Python module (Debian: apt-get install python3-sentencepiece).
The file: max_token_length (int32), then for each id of the vocabulary, in id order, its score
(float32), its length in bytes (int32) and its bytes; little-endian. A piece is written as
llama2.c's run.c expects it: the sentencepiece whitespace mark U+2581 becomes ' ', the <s> and </s>
pieces become "\\n<s>\\n" and "\\n</s>\\n", byte pieces stay "<0xXX>" (run.c's decode reads them).
The vocabulary size is not in the file: it is printed, and a model's vocab_size must equal it.
"""
import argparse
import struct
import sys


def pieces_of(model_path):
    try:
        import sentencepiece
    except ImportError:
        sys.exit("tokenizer_bin.py: the sentencepiece module is missing "
                 "(Debian: apt-get install python3-sentencepiece; or pip install sentencepiece)")
    sp = sentencepiece.SentencePieceProcessor(model_file=model_path)
    out = []
    for i in range(sp.get_piece_size()):
        if i == sp.bos_id():
            text = "\n<s>\n"
        elif i == sp.eos_id():
            text = "\n</s>\n"
        else:
            text = sp.id_to_piece(i).replace("\u2581", " ")
        out.append((sp.get_score(i), text.encode("utf-8")))
    return out


def tokenizer_bin(pieces):
    longest = max((len(b) for _, b in pieces), default=0)
    parts = [struct.pack("<i", longest)]
    for score, b in pieces:
        parts.append(struct.pack("<fi", score, len(b)))
        parts.append(b)
    return b"".join(parts)


def main():
    ap = argparse.ArgumentParser(description="sentencepiece .model -> llama2.c tokenizer.bin")
    ap.add_argument("model", help="the sentencepiece model file (spm_train's PREFIX.model)")
    ap.add_argument("-o", "--output", help="the tokenizer.bin to write (default: the model's name with .bin)")
    args = ap.parse_args()
    out = args.output or (args.model[:-len(".model")] if args.model.endswith(".model") else args.model) + ".bin"
    pieces = pieces_of(args.model)
    with open(out, "wb") as f:
        f.write(tokenizer_bin(pieces))
    print(f"{out}: {len(pieces)} pieces (the vocabulary size)")


if __name__ == "__main__":
    main()
