//! Warp matrix multiply-accumulate as SPV_KHR_cooperative_matrix operations
//! (`TensorMode::CooperativeMatrix`): for targets with cooperative matrices and 32-lane
//! subgroups (one subgroup = one warp; the reflection's `warp_ops` says so).
//!
//! The fragments go through workgroup memory, since a cooperative matrix's distribution over
//! the invocations is the implementation's: each lane stores its A, B and C registers where
//! the PTX fragment layouts (docs/ir.md, "Tensor instructions") put their elements — A
//! row-major, B column-major, C row-major, each in its warp's region of a `u32` scratch array
//! —, the subgroup synchronises, `OpCooperativeMatrixLoadKHR` ×3, `OpCooperativeMatrixMulAddKHR`
//! (integer signedness and `.SAT` as its operands), `OpCooperativeMatrixStoreKHR` of D over
//! C, the subgroup synchronises, each lane reads its D registers back, and the subgroup
//! synchronises once more before the region can be reused. Element types: f16 and s8 / u8
//! (bf16 and tf32 have no cooperative-matrix component type here: such an `Mma` is refused,
//! translate with the subgroup emulation). The module then uses the Vulkan memory model, as
//! the extension requires. Matrix shapes a device supports are its own
//! (`vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR`); the host must check them.
//!
//! Not executed by any test (lavapipe has no cooperative matrices); `spirv-val` checks the
//! modules where it knows the extension (SPIRV-Tools 2023.6 and later).

use super::{berr, Error, E, SCOPE_SUBGROUP};
use dmsh_ir::{Function, Inst, Mma, MmaType, Type};
use rspirv::spirv::{self, StorageClass, Word};

/// Words of one warp's scratch region: A (up to 16×32 bytes), B (32×8 bytes), C/D (16×8 words).
const REGION: u32 = 128 + 64 + 128;
/// Offsets of B and C in a region.
const B_OFF: u32 = 128;
const C_OFF: u32 = 192;

impl E {
    /// The scratch array (one region per warp of the workgroup), made once.
    fn coop_scratch(&mut self) -> Result<Word, Error> {
        if let Some(v) = self.coop {
            return Ok(v);
        }
        if self.variable_size() {
            return Err(Error::Unsupported(
                "cooperative matrices need a workgroup size known at translation time".into(),
            ));
        }
        let total: u64 = self.local_size.iter().map(|&x| x.max(1) as u64).product();
        if total > 1024 {
            return Err(Error::Unsupported(format!(
                "cooperative matrices in a workgroup of {total} invocations (at most 1024)"
            )));
        }
        let u = self.ty(Type::U32);
        let n = self.u32c(total.div_ceil(32) as u32 * REGION);
        let at = self.arr(u, n);
        let pty = self.ptr(StorageClass::Workgroup, at);
        let v = self.global_var(pty, StorageClass::Workgroup, None);
        self.interface.push(v);
        self.coop = Some(v);
        Ok(v)
    }

    /// A pointer to word `idx` of the scratch array.
    fn coop_word(&mut self, scratch: Word, idx: Word) -> Word {
        let u = self.ty(Type::U32);
        let pu = self.ptr(StorageClass::Workgroup, u);
        self.b
            .access_chain(pu, None, scratch, &[idx])
            .expect("block")
    }

    fn subgroup_barrier(&mut self) {
        let sg = self.u32c(SCOPE_SUBGROUP);
        let sem = self.u32c(0x108);
        self.b.control_barrier(sg, sg, sem).expect("block");
    }

    /// `OpTypeCooperativeMatrixKHR` of `comp` elements, `rows` × `cols`, for `use_` (0 A,
    /// 1 B, 2 accumulator), subgroup scope.
    fn coop_type(&mut self, comp: Word, rows: u32, cols: u32, use_: u32) -> Word {
        let sc = self.u32c(SCOPE_SUBGROUP);
        let r = self.u32c(rows);
        let c = self.u32c(cols);
        let us = self.u32c(use_);
        self.b.type_coop_matrix(comp, sc, r, c, us)
    }

    /// The component type of a cooperative matrix of `t` elements.
    fn coop_component(&mut self, t: MmaType) -> Result<Word, Error> {
        Ok(match t {
            MmaType::F16 => self.ty(Type::F16),
            MmaType::F32 => self.ty(Type::F32),
            MmaType::S8 | MmaType::U8 => self.u8t,
            MmaType::S32 => self.ty(Type::U32),
            MmaType::Bf16 | MmaType::Tf32 => {
                return Err(Error::Unsupported(format!(
                    "no cooperative-matrix component type for {t:?} elements (translate with \
                     the subgroup emulation)"
                )))
            }
        })
    }

    /// One `Mma` (`inst`) through cooperative matrices; the value is a vector of D's
    /// registers (read with `Extract`).
    pub(crate) fn mma_coop(&mut self, f: &Function, inst: &Inst, m: Mma) -> Result<Word, Error> {
        let (ca, cb, cc) = (
            self.coop_component(m.a)?,
            self.coop_component(m.b)?,
            self.coop_component(m.acc)?,
        );
        self.warp_ops = true;
        self.coop_used = true;
        let scratch = self.coop_scratch()?;
        let u = self.ty(Type::U32);
        let [na, nb, nc] = m.regs();
        let regs = |e: &E, t: dmsh_ir::Value, n: u32| -> Vec<Word> {
            let a = f.inst(t).args;
            (0..n as usize).map(|k| e.val(a[k.min(3)])).collect()
        };
        let a = regs(self, inst.args[0], na);
        let b = regs(self, inst.args[1], nb);
        let c = regs(self, inst.args[2], nc);
        let lane = self.lane_id();
        let li = self.lane_index();
        let five = self.u32c(5);
        let warp = self.op(spirv::Op::ShiftRightLogical, u, &[li, five]);
        let rc = self.u32c(REGION);
        let base = self.op(spirv::Op::IMul, u, &[warp, rc]);
        let two = self.u32c(2);
        let three = self.u32c(3);
        let g = self.op(spirv::Op::ShiftRightLogical, u, &[lane, two]);
        let t = self.op(spirv::Op::BitwiseAnd, u, &[lane, three]);
        let (ea, eb, ec) = (m.a.per_reg(), m.b.per_reg(), m.acc.per_reg());
        let (k, halves) = (m.k as u32, m.m as u32 / 8);
        // word = base + off + row·stride + col_word, with row = g + 8h (A, C) or column g (B).
        let store = |e: &mut E, off: u32, line: Word, stride: u32, col: Word, v: Word| {
            let s = e.u32c(stride);
            let l = e.op(spirv::Op::IMul, u, &[line, s]);
            let o = e.u32c(off);
            let x = e.op(spirv::Op::IAdd, u, &[base, o]);
            let x = e.op(spirv::Op::IAdd, u, &[x, l]);
            let x = e.op(spirv::Op::IAdd, u, &[x, col]);
            let p = e.coop_word(scratch, x);
            e.store(p, v);
        };
        for (r, &v) in a.iter().enumerate() {
            let (h, kb) = (r as u32 % halves, r as u32 / halves);
            let hk = self.u32c(8 * h);
            let row = self.op(spirv::Op::IAdd, u, &[g, hk]);
            let kc = self.u32c(4 * kb);
            let col = self.op(spirv::Op::IAdd, u, &[t, kc]);
            store(self, 0, row, k / ea, col, v);
        }
        for (r, &v) in b.iter().enumerate() {
            let kc = self.u32c(4 * r as u32);
            let col = self.op(spirv::Op::IAdd, u, &[t, kc]);
            store(self, B_OFF, g, k / eb, col, v);
        }
        // C: f32 / s32 register i is (g + 8(i/2), 2t + i%2); an f16 register h holds both
        // columns of row g + 8h (word t of the row).
        let c_word = |e: &mut E, i: u32| -> (Word, Word) {
            if ec == 2 {
                let hk = e.u32c(8 * i);
                (e.op(spirv::Op::IAdd, u, &[g, hk]), t)
            } else {
                let hk = e.u32c(8 * (i / 2));
                let row = e.op(spirv::Op::IAdd, u, &[g, hk]);
                let two = e.u32c(2);
                let t2 = e.op(spirv::Op::IMul, u, &[t, two]);
                let j = e.u32c(i % 2);
                (row, e.op(spirv::Op::IAdd, u, &[t2, j]))
            }
        };
        for (i, &v) in c.iter().enumerate() {
            let (row, col) = c_word(self, i as u32);
            store(self, C_OFF, row, 8 / ec, col, v);
        }
        self.subgroup_barrier();
        let ta = self.coop_type(ca, m.m as u32, k, 0);
        let tb = self.coop_type(cb, k, m.n as u32, 1);
        let tc = self.coop_type(cc, m.m as u32, m.n as u32, 2);
        let load = |e: &mut E, ty: Word, off: u32, layout: u32, stride: u32| -> Word {
            let o = e.u32c(off);
            let x = e.op(spirv::Op::IAdd, u, &[base, o]);
            let p = e.coop_word(scratch, x);
            let l = e.u32c(layout);
            let s = e.u32c(stride);
            e.op(spirv::Op::CooperativeMatrixLoadKHR, ty, &[p, l, s])
        };
        let mut am = load(self, ta, 0, 0, k / ea);
        let mut bm = load(self, tb, B_OFF, 1, k / eb);
        let cm = load(self, tc, C_OFF, 0, 8 / ec);
        if m.neg_a {
            am = self.op(spirv::Op::FNegate, ta, &[am]);
        }
        if m.neg_b {
            bm = self.op(spirv::Op::FNegate, tb, &[bm]);
        }
        let int = matches!(m.acc, MmaType::S32);
        let mut ops = 0u32;
        if int {
            if m.a == MmaType::S8 {
                ops |= 0x1;
            }
            if m.b == MmaType::S8 {
                ops |= 0x2;
            }
            ops |= 0x4 | 0x8;
            if m.sat {
                ops |= 0x10;
            }
        }
        let dm = if ops != 0 {
            self.op(
                spirv::Op::CooperativeMatrixMulAddKHR,
                tc,
                &[am, bm, cm, ops],
            )
        } else {
            self.op(spirv::Op::CooperativeMatrixMulAddKHR, tc, &[am, bm, cm])
        };
        let o = self.u32c(C_OFF);
        let x = self.op(spirv::Op::IAdd, u, &[base, o]);
        let p = self.coop_word(scratch, x);
        let l = self.u32c(0);
        let s = self.u32c(8 / ec);
        berr(
            self.b
                .void_words(spirv::Op::CooperativeMatrixStoreKHR, &[p, dm, l, s]),
        )?;
        self.subgroup_barrier();
        let mut d = Vec::with_capacity(nc as usize);
        for i in 0..nc {
            let (row, col) = c_word(self, i);
            let st = self.u32c(8 / ec);
            let l = self.op(spirv::Op::IMul, u, &[row, st]);
            let o = self.u32c(C_OFF);
            let x = self.op(spirv::Op::IAdd, u, &[base, o]);
            let x = self.op(spirv::Op::IAdd, u, &[x, l]);
            let x = self.op(spirv::Op::IAdd, u, &[x, col]);
            let p = self.coop_word(scratch, x);
            d.push(self.load(Type::U32, p));
        }
        self.subgroup_barrier();
        let vt = self.vec_ty(u, nc);
        berr(self.b.composite_construct(vt, None, d))
    }
}
