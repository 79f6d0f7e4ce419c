(module
  (memory (export "mem") 1)
  ;; offset (from p) of the first byte b in [p, p+n), or -1
  (func (export "find") (param $p i32) (param $n i32) (param $b i32) (result i32)
    (local $end i32) (local $i i32) (local $v v128) (local $m i32)
    (local $a v128) (local $c v128) (local $d v128) (local $e v128)
    (local.set $v (i8x16.splat (local.get $b)))
    (local.set $end (i32.add (local.get $p) (local.get $n)))
    (local.set $i (local.get $p))
    (block $done64
      (loop $l64
        (br_if $done64 (i32.gt_u (i32.add (local.get $i) (i32.const 64)) (local.get $end)))
        (local.set $a (i8x16.eq (v128.load (local.get $i)) (local.get $v)))
        (local.set $c (i8x16.eq (v128.load offset=16 (local.get $i)) (local.get $v)))
        (local.set $d (i8x16.eq (v128.load offset=32 (local.get $i)) (local.get $v)))
        (local.set $e (i8x16.eq (v128.load offset=48 (local.get $i)) (local.get $v)))
        (if (v128.any_true (v128.or (v128.or (local.get $a) (local.get $c)) (v128.or (local.get $d) (local.get $e))))
          (then (br $done64)))
        (local.set $i (i32.add (local.get $i) (i32.const 64)))
        (br $l64)))
    (block $done16
      (loop $l16
        (br_if $done16 (i32.gt_u (i32.add (local.get $i) (i32.const 16)) (local.get $end)))
        (local.set $m (i8x16.bitmask (i8x16.eq (v128.load (local.get $i)) (local.get $v))))
        (if (local.get $m) (then (return (i32.sub (i32.add (local.get $i) (i32.ctz (local.get $m))) (local.get $p)))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $l16)))
    (block $tdone
      (loop $tl
        (br_if $tdone (i32.ge_u (local.get $i) (local.get $end)))
        (if (i32.eq (i32.load8_u (local.get $i)) (local.get $b)) (then (return (i32.sub (local.get $i) (local.get $p)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $tl)))
    (i32.const -1))
)
