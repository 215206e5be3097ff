#!/usr/bin/env python3
"""transformers' greedy text from a Hugging Face Llama directory, printed as llama2.c's run.c prints it
(and `staticformer run DIR -t 0 -n STEPS -i PROMPT`): the interop check of directories written by
`staticformer convert ... --hf` (tools/hf_write_test.cmake), and the printing of
tools/make_hf_reference.py.
    python3 tools/hf_generate.py DIR [--prompt "ROMEO: But soft"] [--steps 48] [--fast]
The model (LlamaForCausalLM, float32) and the tokenizer (LlamaTokenizer over DIR/tokenizer.model;
--fast: LlamaTokenizerFast over DIR/tokenizer.json alone) are both the directory's own. Without
transformers it prints "SKIPPED: ..." and exits 0.
"""
import argparse
import os
import sys


def runc_text(id_to_piece, ids, steps):
    """run.c's printing of ids[1..steps] (ids[0] is BOS): each piece after the previous one, no space
    after BOS, <0xXX> as its byte, nothing for an unprintable lone byte; a BOS ends the text."""
    out = b""
    for pos in range(min(steps, len(ids) - 1)):
        prev, nxt = ids[pos], ids[pos + 1]
        if nxt == 1:
            break
        piece = id_to_piece(nxt).replace("\u2581", " ")
        if prev == 1 and piece.startswith(" "):
            piece = piece[1:]
        b = piece.encode("utf-8")
        if piece.startswith("<0x") and piece.endswith(">") and len(piece) == 6:
            b = bytes([int(piece[3:5], 16)])
        if len(b) == 1 and not (0x20 <= b[0] <= 0x7e or b in b" \t\n\v\f\r"):  # C's isprint, isspace
            continue
        out += b
    return out + b"\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--prompt", default="ROMEO: But soft")
    ap.add_argument("--steps", type=int, default=48)
    ap.add_argument("--fast", action="store_true")
    a = ap.parse_args()
    try:
        import torch
        from transformers import LlamaForCausalLM, LlamaTokenizer
    except ImportError as e:
        print(f"SKIPPED: transformers is not available ({e})")
        return 0
    if a.fast:
        from transformers import LlamaTokenizerFast
        tok = LlamaTokenizerFast(tokenizer_file=os.path.join(a.dir, "tokenizer.json"))
        id_to_piece = tok.convert_ids_to_tokens
    else:
        tok = LlamaTokenizer.from_pretrained(a.dir)
        id_to_piece = tok.sp_model.id_to_piece
    model = LlamaForCausalLM.from_pretrained(a.dir, torch_dtype=torch.float32).eval()
    prompt = tok(a.prompt)["input_ids"]  # BOS, then sentencepiece's ids (run.c's encoding)
    with torch.no_grad():
        out = model.generate(torch.tensor([prompt]), max_new_tokens=max(1, a.steps + 1 - len(prompt)), do_sample=False,
                             num_beams=1, pad_token_id=0, eos_token_id=None)[0].tolist()
    sys.stdout.buffer.write(runc_text(id_to_piece, out, a.steps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
