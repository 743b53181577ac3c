//! Debug helper: for each hex word on the command line, show the decoded form or, when it
//! does not decode, the forms of the same top 12 bits and which fixed bits differ.
fn main() {
    let t = dmsh_isa::table::table();
    for a in std::env::args().skip(1) {
        let w = u64::from_str_radix(a.trim_start_matches("0x"), 16).expect("hex word");
        match dmsh_isa::decode(w) {
            Ok(i) => println!("{w:016x} {} : {}", i.form_name(), i.print(0, 0)),
            Err(_) => {
                let mut v: Vec<_> = t
                    .forms
                    .iter()
                    .map(|f| ((w & f.mask) ^ f.value, f))
                    .filter(|(d, _)| d >> 52 == 0)
                    .collect();
                v.sort_by_key(|(d, _)| d.count_ones());
                for (d, f) in v.iter().take(3) {
                    let bits: Vec<u32> = (0..64).filter(|b| d >> b & 1 != 0).collect();
                    println!("{w:016x} near {} : differing fixed bits {bits:?}", f.name);
                }
                if v.is_empty() {
                    println!("{w:016x}: no form with these top bits");
                }
            }
        }
    }
}
