//! Fuzz target: any bytes, read as a Maxwell code stream, decode -> print -> encode without
//! panicking; every decoded instruction re-encodes to its own bits.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let items: Vec<_> = dmsh_isa::stream::instructions(data).collect();
    let phases = dmsh_isa::stream::tex_phases(&items);
    for ((offset, r, sched), tp) in items.iter().zip(phases) {
        if let Ok(i) = r {
            let ctx = dmsh_isa::print::Context { reuse: sched.reuse, tex_phase: tp };
            let _ = i.print_ctx(*offset, ctx);
            assert_eq!(i.encode(), i.bits());
        }
    }
    for c in data.chunks_exact(8).step_by(4) {
        let w = u64::from_le_bytes(c.try_into().unwrap());
        assert_eq!(dmsh_isa::Ctrl::decode(w).encode(), w);
    }
    let _ = dmsh_isa::stream::listing(data);
});
