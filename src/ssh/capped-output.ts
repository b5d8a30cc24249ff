// Captured output of one stream with a byte cap: the first half of the cap is
// kept from the head, the last half from the tail, and the bytes in between
// are only counted. Invariants: memory stays under the cap however much the
// command prints (`cat` of a 2 GB log costs `cap` bytes); bytes are decoded
// as UTF-8 only at the end, over whole buffers, so a character split across
// chunks decodes correctly, and a character cut by the head/tail boundary is
// dropped rather than turned into garbage. NUL bytes come out as U+FFFD,
// like invalid UTF-8: PostgreSQL text cannot hold NUL, and output that could
// not be stored would lose the whole result.

export interface CapturedText {
  text: string;
  droppedBytes: number;
}

export class CappedOutput {
  readonly #headCap: number;
  readonly #tailCap: number;
  readonly #head: Buffer[] = [];
  #headLen = 0;
  #tail: Buffer[] = [];
  #tailLen = 0;
  #dropped = 0;

  constructor(capBytes: number) {
    if (capBytes < 16) throw new Error("output cap must be at least 16 bytes");
    this.#headCap = Math.floor(capBytes / 2);
    this.#tailCap = capBytes - this.#headCap;
  }

  push(chunk: Buffer): void {
    let rest = chunk;
    if (this.#headLen < this.#headCap) {
      const take = Math.min(this.#headCap - this.#headLen, rest.length);
      this.#head.push(Buffer.from(rest.subarray(0, take)));
      this.#headLen += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0) return;
    if (rest.length >= this.#tailCap) {
      this.#dropped += this.#tailLen + rest.length - this.#tailCap;
      this.#tail = [Buffer.from(rest.subarray(rest.length - this.#tailCap))];
      this.#tailLen = this.#tailCap;
      return;
    }
    this.#tail.push(Buffer.from(rest));
    this.#tailLen += rest.length;
    while (this.#tailLen > this.#tailCap) {
      const first = this.#tail[0]!;
      const excess = this.#tailLen - this.#tailCap;
      if (first.length <= excess) {
        this.#tail.shift();
        this.#tailLen -= first.length;
        this.#dropped += first.length;
      } else {
        this.#tail[0] = first.subarray(excess);
        this.#tailLen -= excess;
        this.#dropped += excess;
      }
    }
  }

  get totalBytes(): number {
    return this.#headLen + this.#dropped + this.#tailLen;
  }

  result(): CapturedText {
    const head = Buffer.concat(this.#head);
    const tail = Buffer.concat(this.#tail);
    if (this.#dropped === 0) {
      return { text: decode(Buffer.concat([head, tail])), droppedBytes: 0 };
    }
    const headEnd = completeUtf8Prefix(head);
    let tailStart = 0;
    while (tailStart < tail.length && (tail[tailStart]! & 0xc0) === 0x80) tailStart++;
    const dropped = this.#dropped + (head.length - headEnd) + tailStart;
    return {
      text: `${decode(head.subarray(0, headEnd))}\n[... ${dropped} bytes dropped ...]\n${decode(tail.subarray(tailStart))}`,
      droppedBytes: dropped,
    };
  }
}

/** UTF-8 to text; invalid sequences and NUL become U+FFFD; a byte-order mark is kept (it is output like any other). */
function decode(b: Buffer): string {
  return new TextDecoder("utf-8", { ignoreBOM: true }).decode(b).replaceAll("\0", "\uFFFD");
}

/** Length of the longest prefix of `b` that does not end inside a UTF-8 sequence. */
function completeUtf8Prefix(b: Buffer): number {
  const i = b.length;
  // Walk back over at most 3 continuation bytes to the lead byte.
  let back = 0;
  while (back < 3 && i - back - 1 >= 0 && (b[i - back - 1]! & 0xc0) === 0x80) back++;
  const leadIndex = i - back - 1;
  if (leadIndex < 0) return i;
  const lead = b[leadIndex]!;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return back + 1 >= need ? i : leadIndex;
}
