//! What a draw produces: read-back images and the outputs record.

use super::*;

/// A read-back color target.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Image {
    /// Width.
    pub width: u32,
    /// Height (for layered targets: layer height × layers, layers stacked top to bottom).
    pub height: u32,
    /// Texel format.
    pub format: TexFormat,
    /// Tightly packed rows, top row first.
    pub data: Vec<u8>,
}

impl Image {
    /// The image as RGBA8 (floats clamped to [0, 1]; integers clamped to 255; R formats grey).
    pub fn to_rgba8(&self) -> Vec<u8> {
        let n = (self.width * self.height) as usize;
        let unit = |f: f32| (f.clamp(0.0, 1.0) * 255.0 + 0.5) as u8;
        let mut out = Vec::with_capacity(n * 4);
        let w32 = |i: usize| {
            self.data
                .get(i..i + 4)
                .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        // The half float at byte `i`, as a unit channel.
        let f16_unit = |i: usize| {
            let h = self
                .data
                .get(i..i + 2)
                .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]));
            unit(crate::tessellator::half_to_f32(h))
        };
        for p in 0..n {
            match self.format {
                TexFormat::Rgba8Unorm | TexFormat::Rgba8Uint => {
                    out.extend_from_slice(self.data.get(p * 4..p * 4 + 4).unwrap_or(&[0; 4]))
                }
                TexFormat::Rgba16Float => {
                    for c in 0..4 {
                        out.push(f16_unit(p * 8 + c * 2));
                    }
                }
                TexFormat::Rgba32Float => {
                    for c in 0..4 {
                        out.push(unit(f32::from_bits(w32(p * 16 + c * 4))));
                    }
                }
                TexFormat::R32Float | TexFormat::Depth32Float => {
                    let v = unit(f32::from_bits(w32(p * 4)));
                    out.extend_from_slice(&[v, v, v, 255]);
                }
                TexFormat::R32Uint | TexFormat::R32Sint => {
                    let v = w32(p * 4).min(255) as u8;
                    out.extend_from_slice(&[v, v, v, 255]);
                }
                TexFormat::Rgba32Uint | TexFormat::Rgba32Sint => {
                    for c in 0..4 {
                        out.push(w32(p * 16 + c * 4).min(255) as u8);
                    }
                }
                TexFormat::Rg16Float => {
                    for c in 0..2 {
                        out.push(f16_unit(p * 4 + c * 2));
                    }
                    out.extend_from_slice(&[0, 255]);
                }
            }
        }
        out
    }

    /// PNG (RGBA8) bytes of [`Image::to_rgba8`].
    pub fn to_png(&self) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut out, self.width, self.height);
            enc.set_color(png::ColorType::Rgba);
            enc.set_depth(png::BitDepth::Eight);
            let mut w = enc
                .write_header()
                .map_err(|e| Error::Job(format!("PNG: {e}")))?;
            w.write_image_data(&self.to_rgba8())
                .map_err(|e| Error::Job(format!("PNG: {e}")))?;
        }
        Ok(out)
    }

    /// Fraction of pixels whose RGBA8 channels all lie within `tol` of `other`'s, and the
    /// largest channel difference. Sizes must match (else 0.0 and 255).
    pub fn compare(&self, other: &Image, tol: u8) -> (f64, u8) {
        if self.width != other.width || self.height != other.height {
            return (0.0, 255);
        }
        let (a, b) = (self.to_rgba8(), other.to_rgba8());
        let mut ok = 0usize;
        let mut worst = 0u8;
        for (pa, pb) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
            let d = pa
                .iter()
                .zip(pb)
                .map(|(x, y)| x.abs_diff(*y))
                .max()
                .unwrap_or(0);
            worst = worst.max(d);
            if d <= tol {
                ok += 1;
            }
        }
        (ok as f64 / (a.len() / 4).max(1) as f64, worst)
    }
}

/// What a draw produced.
#[derive(Debug, Clone, Default)]
pub struct RenderOutputs {
    /// Color targets.
    pub targets: Vec<Image>,
    /// Final bytes of every buffer.
    pub buffers: Vec<Vec<u8>>,
    /// Final texels of every texture / storage image, in job order.
    pub images: Vec<Vec<u8>>,
    /// The depth target's values, row by row, when the job asked for one.
    pub depth: Option<Vec<f32>>,
    /// Device name.
    pub device: String,
    /// Milliseconds to create the pipeline.
    pub pipeline_ms: f64,
    /// Milliseconds from submit to fence (includes lavapipe's first-use compile); with a
    /// lowered geometry pipeline, all three passes (one submission); with a lowered
    /// tessellation pipeline, both submissions and the host tessellator.
    pub draw_ms: f64,
    /// GPU milliseconds per pass from timestamp queries: `draw` for a plain draw;
    /// `vertex_capture`, `geometry_kernel` and `geometry_draw` for a lowered geometry
    /// pipeline; `vertex_capture`, `tess_control_kernel`, `tessellator_host` (host
    /// milliseconds of the software tessellator, not GPU time) and `tess_eval_draw` for a
    /// lowered tessellation pipeline. Empty when the queue has no timestamps.
    pub pass_ms: Vec<(String, f64)>,
    /// A lowered geometry pipeline's buffers after the draw, by role (`vertices_in`,
    /// `vertices_out`, `indices`, `params`, `index_source`), or a lowered tessellation
    /// pipeline's (all nine roles, `domain_points` as tessellated); empty otherwise.
    pub geometry: Vec<Vec<u8>>,
}
