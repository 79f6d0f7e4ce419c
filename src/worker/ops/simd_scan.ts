/**
 * Byte scans for the search op, 16 to 64 bytes a step with WebAssembly SIMD: a search reads
 * every file of a tree, and the engine's `Uint8Array.prototype.indexOf` is a plain loop (1.2–2 GB/s
 * against 6.6–9.4 GB/s here). The module is embedded as bytes, since the effect
 * worker may read nothing outside the workspace; instantiating it needs no Deno permission.
 * Where WebAssembly SIMD is missing, the same three scans run in plain JavaScript.
 *
 * The files are read straight into the module's memory ({@link Scan.heap}), so nothing is
 * copied before it is scanned. The bytes below are `wat2wasm` (Debian package wabt) of:
 *
 * ```wat
 * (module
 *   (memory (export "mem") 1)
 *   ;; offset (from p) of the first byte b in [p, p+n), or -1
 *   (func (export "find") (param $p i32) (param $n i32) (param $b i32) (result i32)
 *     (local $end i32) (local $i i32) (local $v v128) (local $m i32)
 *     (local.set $v (i8x16.splat (local.get $b)))
 *     (local.set $end (i32.add (local.get $p) (local.get $n)))
 *     (local.set $i (local.get $p))
 *     (block $done64
 *       (loop $l64
 *         (br_if $done64 (i32.gt_u (i32.add (local.get $i) (i32.const 64)) (local.get $end)))
 *         (br_if $done64
 *           (v128.any_true
 *             (v128.or
 *               (v128.or
 *                 (i8x16.eq (v128.load (local.get $i)) (local.get $v))
 *                 (i8x16.eq (v128.load offset=16 (local.get $i)) (local.get $v)))
 *               (v128.or
 *                 (i8x16.eq (v128.load offset=32 (local.get $i)) (local.get $v))
 *                 (i8x16.eq (v128.load offset=48 (local.get $i)) (local.get $v))))))
 *         (local.set $i (i32.add (local.get $i) (i32.const 64)))
 *         (br $l64)))
 *     (block $done16
 *       (loop $l16
 *         (br_if $done16 (i32.gt_u (i32.add (local.get $i) (i32.const 16)) (local.get $end)))
 *         (local.set $m (i8x16.bitmask (i8x16.eq (v128.load (local.get $i)) (local.get $v))))
 *         (if (local.get $m)
 *           (then (return (i32.sub (i32.add (local.get $i) (i32.ctz (local.get $m))) (local.get $p)))))
 *         (local.set $i (i32.add (local.get $i) (i32.const 16)))
 *         (br $l16)))
 *     (block $tdone
 *       (loop $tl
 *         (br_if $tdone (i32.ge_u (local.get $i) (local.get $end)))
 *         (if (i32.eq (i32.load8_u (local.get $i)) (local.get $b))
 *           (then (return (i32.sub (local.get $i) (local.get $p)))))
 *         (local.set $i (i32.add (local.get $i) (i32.const 1)))
 *         (br $tl)))
 *     (i32.const -1))
 *
 *   ;; offset (from p) of the first i in [p, p+n) with mem[i] = a and mem[i+d] = c, or -1;
 *   ;; reads up to d + 15 bytes past p+n, which the caller keeps inside memory
 *   (func (export "find2") (param $p i32) (param $n i32) (param $a i32) (param $c i32) (param $d i32) (result i32)
 *     (local $end i32) (local $i i32) (local $va v128) (local $vc v128) (local $m i32) (local $j i32)
 *     (local.set $va (i8x16.splat (local.get $a)))
 *     (local.set $vc (i8x16.splat (local.get $c)))
 *     (local.set $end (i32.add (local.get $p) (local.get $n)))
 *     (local.set $i (local.get $p))
 *     (block $done32
 *       (loop $l32
 *         (br_if $done32 (i32.gt_u (i32.add (local.get $i) (i32.const 32)) (local.get $end)))
 *         (local.set $j (i32.add (local.get $i) (local.get $d)))
 *         (br_if $done32
 *           (v128.any_true
 *             (v128.or
 *               (v128.and
 *                 (i8x16.eq (v128.load (local.get $i)) (local.get $va))
 *                 (i8x16.eq (v128.load (local.get $j)) (local.get $vc)))
 *               (v128.and
 *                 (i8x16.eq (v128.load offset=16 (local.get $i)) (local.get $va))
 *                 (i8x16.eq (v128.load offset=16 (local.get $j)) (local.get $vc))))))
 *         (local.set $i (i32.add (local.get $i) (i32.const 32)))
 *         (br $l32)))
 *     (block $done16
 *       (loop $l16
 *         (br_if $done16 (i32.ge_u (local.get $i) (local.get $end)))
 *         (local.set $m
 *           (i8x16.bitmask
 *             (v128.and
 *               (i8x16.eq (v128.load (local.get $i)) (local.get $va))
 *               (i8x16.eq (v128.load (i32.add (local.get $i) (local.get $d))) (local.get $vc)))))
 *         (if (local.get $m)
 *           (then
 *             (local.set $m (i32.add (local.get $i) (i32.ctz (local.get $m))))
 *             (return
 *               (select (i32.sub (local.get $m) (local.get $p)) (i32.const -1)
 *                 (i32.lt_u (local.get $m) (local.get $end))))))
 *         (local.set $i (i32.add (local.get $i) (i32.const 16)))
 *         (br $l16)))
 *     (i32.const -1))
 *
 *   ;; how many bytes b lie in [p, p+n)
 *   (func (export "count") (param $p i32) (param $n i32) (param $b i32) (result i32)
 *     (local $end i32) (local $i i32) (local $v v128) (local $k i32)
 *     (local.set $v (i8x16.splat (local.get $b)))
 *     (local.set $end (i32.add (local.get $p) (local.get $n)))
 *     (local.set $i (local.get $p))
 *     (block $done16
 *       (loop $l16
 *         (br_if $done16 (i32.gt_u (i32.add (local.get $i) (i32.const 16)) (local.get $end)))
 *         (local.set $k
 *           (i32.add (local.get $k)
 *             (i32.popcnt (i8x16.bitmask (i8x16.eq (v128.load (local.get $i)) (local.get $v))))))
 *         (local.set $i (i32.add (local.get $i) (i32.const 16)))
 *         (br $l16)))
 *     (block $tdone
 *       (loop $tl
 *         (br_if $tdone (i32.ge_u (local.get $i) (local.get $end)))
 *         (local.set $k
 *           (i32.add (local.get $k) (i32.eq (i32.load8_u (local.get $i)) (local.get $b))))
 *         (local.set $i (i32.add (local.get $i) (i32.const 1)))
 *         (br $tl)))
 *     (local.get $k))
 * )
 * ```
 */

const WASM_HEX =
  "0061736d0100000001110260037f7f7f017f60057f7f7f7f7f017f0304030001000503010001071e04036d656d02" +
  "000466696e6400000566696e6432000105636f756e7400020af50303c50103027f017b017f2002fd0f2105200020" +
  "016a21032000210402400340200441c0006a20034b0d012004fd0004002005fd232004fd0004102005fd23fd5020" +
  "04fd0004202005fd232004fd0004302005fd23fd50fd50fd530d01200441c0006a21040c000b0b02400340200441" +
  "106a20034b0d012004fd0004002005fd23fd6421062006044020042006686a20006b0f0b200441106a21040c000b" +
  "0b02400340200420034f0d0120042d00002002460440200420006b0f0b200441016a21040c000b0b417f0bc10103" +
  "027f027b027f2002fd0f21072003fd0f2108200020016a21052000210602400340200641206a20054b0d01200620" +
  "046a210a2006fd0004002007fd23200afd0004002008fd23fd4e2006fd0004102007fd23200afd0004102008fd23" +
  "fd4efd50fd530d01200641206a21060c000b0b02400340200620054f0d012006fd0004002007fd23200620046afd" +
  "0004002008fd23fd4efd6421092009044020062009686a2109200920006b417f20092005491b0f0b200641106a21" +
  "060c000b0b417f0b6903027f017b017f2002fd0f2105200020016a21032000210402400340200441106a20034b0d" +
  "0120062004fd0004002005fd23fd64696a2106200441106a21040c000b0b02400340200420034f0d01200620042d" +
  "00002002466a2106200441016a21040c000b0b20060b";

/** Bytes a scan may read past the end it was given (find2 reads d + 15 past it). */
export const SCAN_PAD = 64;

export interface Scan {
  /** Whether the WebAssembly SIMD module runs (false: the plain JavaScript fallback). */
  readonly simd: boolean;
  /** The memory files are read into; re-read after {@link Scan.ensure}, which may replace it. */
  heap(): Uint8Array;
  /** Grows the memory to hold at least `size` bytes. */
  ensure(size: number): void;
  /** Offset from `p` of the first byte `b` in [p, p + n), or -1. */
  find(p: number, n: number, b: number): number;
  /**
   * Offset from `p` of the first i in [p, p + n) with heap[i] = a and heap[i + d] = c, or -1.
   * Reads up to d + 15 bytes past p + n: keep them inside the heap.
   */
  find2(p: number, n: number, a: number, c: number, d: number): number;
  /** How many bytes `b` lie in [p, p + n). */
  count(p: number, n: number, b: number): number;
}

function wasmBytes(): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(WASM_HEX.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(WASM_HEX.slice(2 * i, 2 * i + 2), 16);
  return out;
}

interface Exports {
  mem: WebAssembly.Memory;
  find(p: number, n: number, b: number): number;
  find2(p: number, n: number, a: number, c: number, d: number): number;
  count(p: number, n: number, b: number): number;
}

function simdScan(exports: Exports): Scan {
  const { mem } = exports;
  let heap = new Uint8Array(mem.buffer);
  return {
    simd: true,
    heap: () => heap,
    ensure(size) {
      if (size <= heap.length) return;
      mem.grow(Math.ceil((size - heap.length) / 65536));
      heap = new Uint8Array(mem.buffer);
    },
    find: exports.find,
    find2: exports.find2,
    count: exports.count,
  };
}

/** The same scans over an ordinary buffer, for an engine without WebAssembly SIMD. */
export function plainScan(): Scan {
  let heap = new Uint8Array(65536);
  return {
    simd: false,
    heap: () => heap,
    ensure(size) {
      if (size <= heap.length) return;
      const grown = new Uint8Array(Math.max(size, heap.length * 2));
      grown.set(heap);
      heap = grown;
    },
    find(p, n, b) {
      return heap.subarray(p, p + n).indexOf(b);
    },
    find2(p, n, a, c, d) {
      const view = heap.subarray(p, p + n);
      for (let i = view.indexOf(a); i !== -1; i = view.indexOf(a, i + 1)) {
        if (heap[p + i + d] === c) return i;
      }
      return -1;
    },
    count(p, n, b) {
      const view = heap.subarray(p, p + n);
      let k = 0;
      for (let i = view.indexOf(b); i !== -1; i = view.indexOf(b, i + 1)) k++;
      return k;
    },
  };
}

/** The SIMD scan when this engine validates and runs the module, else the plain one. */
export async function loadScan(): Promise<Scan> {
  const bytes = wasmBytes();
  if (typeof WebAssembly !== "object" || !WebAssembly.validate(bytes)) return plainScan();
  try {
    const { instance } = await WebAssembly.instantiate(bytes);
    return simdScan(instance.exports as unknown as Exports);
  } catch {
    return plainScan();
  }
}
