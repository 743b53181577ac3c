//! Prints every Ampere form as `NAME MASK VALUE` (hex, 128 bits), one per line: the input of
//! tools/isa/tests/data/gen-sm86-random.py. `cargo run --release -p dmsh-isa --example
//! ampere_forms`.

use dmsh_isa::{ampere::Ampere, Isa};

fn main() {
    for f in &Ampere::table().forms {
        println!("{} {:032x} {:032x}", f.name, f.mask, f.value);
    }
}
