/*
 * dmsh_runtime.h — the C ABI of dmsh-runtime (runtime/, docs/runtime.md).
 *
 * Hand-written; runtime/tests/c_example.rs compiles tests/c/example_host.c against it with
 * -Wall -Werror, compares every struct's size and field offsets with the Rust definitions
 * (src/abi.rs) and every function name with src/ffi.rs, so the header cannot drift.
 *
 * Link libdmsh_runtime.a (plus -lpthread -ldl -lm on Linux) or libdmsh_runtime.so / .dylib.
 * No function unwinds into C: failures are a DmshStatus and dmsh_last_error().
 */
#ifndef DMSH_RUNTIME_H
#define DMSH_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes: 0 success, one code per cause (dmsh_last_error() says more). */
typedef uint32_t DmshStatus;
#define DMSH_OK 0u
#define DMSH_ERR_ARGUMENT 1u           /* NULL pointer, non-UTF-8 path, bad depth or size  */
#define DMSH_ERR_CHAIN 2u              /* no chain version supplied nor compiled in, or bad */
#define DMSH_ERR_MAP 3u                /* shader map unreadable or malformed               */
#define DMSH_ERR_FOLDER_MISSING 4u     /* no b-<V> folder and no other build either        */
#define DMSH_ERR_FOLDER_VERSION 5u     /* only other versions' b-* folders, or _b_build.json
                                          records another chain: nothing loaded            */
#define DMSH_ERR_UNKNOWN_KEY 6u        /* key not in the shader map                        */
#define DMSH_ERR_NOT_BUILT 7u          /* key in the map, no <key>_b.json (build failed)   */
#define DMSH_ERR_REFLECTION 8u         /* reflection unreadable, malformed, not the map's  */
#define DMSH_ERR_REFLECTION_SCHEMA 9u  /* reflection schema version not this runtime's     */
#define DMSH_ERR_REFLECTION_CHAIN 10u  /* reflection of another chain version (or none)    */
#define DMSH_ERR_C1_MISSING 11u        /* no c1_full.tsv: every shader gets its own c1     */
#define DMSH_ERR_C1_VERSION 12u        /* c1 list of another b-<V>: not used               */
#define DMSH_ERR_C1_BAD 13u            /* malformed c1 list: not used                      */
#define DMSH_ERR_KEY 14u               /* control section / code area without a key        */
#define DMSH_ERR_INTERNAL 15u          /* a bug caught at the boundary                     */
#define DMSH_ERR_WARM_MISSING 16u      /* a warm-up list does not exist or was not given   */
#define DMSH_ERR_WARM_BAD 17u          /* a warm-up list unusable as a whole: not used     */
#define DMSH_ERR_WARM_WRITE 18u        /* the device list could not be written (or none)   */
#define DMSH_ERR_METAL 19u             /* the macOS Metal layer (Rust, feature metal) failed */
#define DMSH_ERR_TOPOLOGY 20u          /* dmsh_check_topology: the geometry kernel does not
                                          assemble the draw's topology: do not draw it     */

/* Stages (dmsh_formats::Stage order). */
#define DMSH_STAGE_VERTEX 0u
#define DMSH_STAGE_TESS_CONTROL 1u
#define DMSH_STAGE_TESS_EVAL 2u
#define DMSH_STAGE_GEOMETRY 3u
#define DMSH_STAGE_FRAGMENT 4u
#define DMSH_STAGE_COMPUTE 5u

/* Depth modes: which Metal entry point dmsh_lookup returns. */
#define DMSH_DEPTH_GL 0u          /* NVN GL mode (near -1): main0 (z' = z/2 + w/2)         */
#define DMSH_DEPTH_ZERO_TO_ONE 1u /* NVN zero-to-one mode: main0_z on vertex shaders       */

/* Binding kinds (the reflection's "kind", docs/reflection.md). */
#define DMSH_BIND_CBUF 1u      /* uniform buffer (guest constant bank `slot`)                */
#define DMSH_BIND_SBUF 2u      /* storage buffer slot                                        */
#define DMSH_BIND_SBUF_UBO 3u  /* storage buffer whose address is in uniform buffer `slot`
                                  at byte `guest_offset`                                     */
#define DMSH_BIND_TEXTURE 4u   /* texture slot (combined, or separate with the flag)         */
#define DMSH_BIND_SAMPLER 5u   /* separate sampler slot                                      */
#define DMSH_BIND_IMAGE 6u     /* image slot                                                 */
#define DMSH_BIND_TEX_UBO 7u   /* texture whose handle is in uniform buffer bank `slot`
                                  at byte `guest_offset`                                     */
#define DMSH_BIND_SAMP_UBO 8u  /* its sampler, from the same handle word's high 12 bits      */
#define DMSH_BIND_SAMP_ID 9u   /* a texture's sampler given by constant sampler ID `slot`    */
#define DMSH_BIND_TEX_DYN 10u  /* `count` textures indexed by the handle's texture ID       */
#define DMSH_BIND_SAMP_DYN 11u /* `count` samplers indexed by the handle's sampler ID       */
#define DMSH_BIND_LOWERED 12u  /* a buffer between the passes of a lowered geometry or
                                  tessellation pipeline; `slot` is its DMSH_LOWERED_* role   */
#define DMSH_BIND_PUSH 13u     /* a Vulkan module's push constant block: `size` bytes the
                                  host sets at buffer metal_index (setVertexBytes, ...)      */

/* DMSH_BIND_LOWERED roles (docs/geometry.md, docs/tessellation.md; Vulkan binding 240 + role) */
#define DMSH_LOWERED_VERTICES_IN 0u    /* 576-byte vertex records the capture pass writes    */
#define DMSH_LOWERED_VERTICES_OUT 1u   /* records the geometry kernel writes (0: null vertex) */
#define DMSH_LOWERED_INDICES 2u        /* the geometry draw's u32 index list                  */
#define DMSH_LOWERED_PARAMS 3u         /* 8 u32 the host fills for the kernel                 */
#define DMSH_LOWERED_INDEX_SOURCE 4u   /* the app's index buffer (any 16 bytes if none)       */
#define DMSH_LOWERED_CONTROL_POINTS 5u /* tessellation: control-point records                 */
#define DMSH_LOWERED_PATCH_DATA 6u     /* tessellation: 96-byte patch records                 */
#define DMSH_LOWERED_TESS_FACTORS 7u   /* tessellation: Metal's half-float factor buffer      */
#define DMSH_LOWERED_DOMAIN_POINTS 8u  /* tessellation, lavapipe only: domain points          */

/* DmshLowering.pass: which pass of a lowered pipeline a module is (0: a direct shader). */
#define DMSH_PASS_NONE 0u
#define DMSH_PASS_VERTEX_CAPTURE 1u      /* <vs>_g: vertex shader writing vertices_in,
                                            rasterization off                              */
#define DMSH_PASS_GEOMETRY_KERNEL 2u     /* <gs>_b: compute kernel, primitive x invocation */
#define DMSH_PASS_GEOMETRY_DRAW 3u       /* <gs>_p: vertex function of the indexed draw    */
#define DMSH_PASS_TESS_CONTROL_KERNEL 4u /* <tcs>_b: compute kernel, one group per patch   */
#define DMSH_PASS_TESS_EVAL_POST 5u      /* <tes>_b: post-tessellation vertex function     */
#define DMSH_PASS_TESS_EVAL_DRAW 6u      /* the TES over domain points (lavapipe's form)   */

/* DmshLowering.output: the geometry draw's list topology (0: none). */
#define DMSH_PRIM_POINTS 1u
#define DMSH_PRIM_LINES 2u
#define DMSH_PRIM_TRIANGLES 3u

/* DmshLowering.tess_*: the evaluation shader's tessellation state (Metal's
   MTLRenderPipelineDescriptor tessellation settings; the reflection's "tessellation"). */
#define DMSH_TESS_DOMAIN_TRIANGLES 1u
#define DMSH_TESS_DOMAIN_QUADS 2u
#define DMSH_TESS_DOMAIN_ISOLINES 3u
#define DMSH_TESS_SPACING_EQUAL 1u
#define DMSH_TESS_SPACING_FRACTIONAL_ODD 2u
#define DMSH_TESS_SPACING_FRACTIONAL_EVEN 3u
#define DMSH_TESS_OUTPUT_TRIANGLES_CCW 1u
#define DMSH_TESS_OUTPUT_TRIANGLES_CW 2u
#define DMSH_TESS_OUTPUT_POINTS 3u
#define DMSH_TESS_OUTPUT_LINES 4u

/* dmsh_lookup_pass variants: which file of a key. */
#define DMSH_VARIANT_MAIN 0u         /* <key>_b: the shader (as dmsh_lookup)                */
#define DMSH_VARIANT_DRAW 1u         /* <key>_p: a geometry key's draw vertex function      */
#define DMSH_VARIANT_CAPTURE 2u      /* <key>_g: a vertex key's capture form (built in a
                                        title with geometry or tess control shaders)      */
#define DMSH_VARIANT_PRIMITIVE_ID 3u /* <key>_q: a fragment key reading gl_PrimitiveID from
                                        the geometry draw's varying                        */
#define DMSH_VARIANT_DUAL_SOURCE 4u  /* <key>_d: a Vulkan fragment module's dual-source form
                                        (location 1 as [[color(0), index(1)]]), for blends
                                        reading source 1                                   */

#define DMSH_NO_INDEX 0xffffffffu /* metal_sampler of a resource without a sampler */

/* DmshBinding.flags */
#define DMSH_BINDING_SEPARATE 1u      /* a separate image                                   */
#define DMSH_BINDING_READS_DYNAMIC 2u /* cbuf: some read's offset is computed at run time   */
#define DMSH_BINDING_SIZE_KNOWN 4u    /* `size` is given                                    */

/* DmshShader.flags */
#define DMSH_SHADER_C1_FULL 1u          /* give it its own whole 64 KiB c1 buffer           */
#define DMSH_SHADER_METAL_FITS 2u       /* every Metal argument table fits                  */
#define DMSH_SHADER_METAL_DIRECT 4u     /* Metal runs the stage directly                    */
#define DMSH_SHADER_WARP_OPS 8u         /* needs 32-lane SIMD-groups                        */
#define DMSH_SHADER_LOCAL_SIZE_SPEC 16u /* compute group size from the dispatch             */
#define DMSH_SHADER_GLOBAL_ADDRESSES 32u /* 64-bit global addresses                         */
#define DMSH_SHADER_INT64_ATOMICS 64u   /* 64-bit atomics                                   */

/* Component types of DmshIo. */
#define DMSH_TYPE_FLOAT 0u
#define DMSH_TYPE_SINT 1u
#define DMSH_TYPE_UINT 2u

/* DmshOpenParams.flags */
#define DMSH_OPEN_EAGER 1u     /* read every reflection at open: no lookup ever reads a file */
#define DMSH_OPEN_WARM_OFF 2u  /* read neither warm-up list (DM_PSO_MANIFEST=off)            */

/* DmshWarmRow.kind: the rows' letters S, R, C (docs/runtime.md, "Warm-up lists"). */
#define DMSH_WARM_SHADER 1u  /* S: a shader's library and functions */
#define DMSH_WARM_RENDER 2u  /* R: a render pipeline                */
#define DMSH_WARM_COMPUTE 3u /* C: a compute pipeline               */
/* DmshWarmRow.list */
#define DMSH_WARM_SEED 0u    /* the bundled seed list pso_manifest.tsv (pre-built first)   */
#define DMSH_WARM_DEVICE 1u  /* this device's list pso_user.tsv (pre-built after the seed) */

/* One resource the host binds. */
typedef struct DmshBinding {
    uint32_t kind;          /* DMSH_BIND_*                                                  */
    uint32_t slot;          /* guest bank (cbuf), uniform-buffer slot (sbuf_ubo, tex_ubo,
                               samp_ubo), else the slot (samp_id: the sampler ID)           */
    uint32_t guest_offset;  /* cbuf: guest byte at buffer byte 0; sbuf_ubo / tex_ubo /
                               samp_ubo: byte offset of the address or handle word          */
    uint32_t vk_binding;    /* Vulkan binding (docs/reflection.md)                          */
    uint32_t metal_index;   /* index in its Metal table (buffer, texture or sampler)        */
    uint32_t metal_sampler; /* combined image sampler's Metal sampler, else DMSH_NO_INDEX   */
    uint32_t count;         /* Metal entries from metal_index on: 1, or the array's count   */
    uint32_t flags;         /* DMSH_BINDING_*                                               */
    uint32_t read_first;    /* cbuf: first read range in DmshShader.reads                   */
    uint32_t read_count;    /* cbuf: its ranges (bank 0: the driver-segment words to fill)  */
    uint64_t size;          /* bytes when DMSH_BINDING_SIZE_KNOWN, else 0                   */
} DmshBinding;

/* A guest byte range [start, end) of a constant bank. */
typedef struct DmshRange {
    uint32_t start;
    uint32_t end;
} DmshRange;

/* One stage input or output (four components of one type). */
typedef struct DmshIo {
    uint32_t location;
    uint32_t component_type; /* DMSH_TYPE_* */
    uint32_t index;          /* colour output's blend source: 1 for the second source of a
                                dual-source variant ([[color(location), index(1)]]), else 0 */
} DmshIo;

/* What the host builds around one pass of a lowered geometry or tessellation pipeline (the
   reflection's `lowering`; docs/geometry.md, docs/tessellation.md). Unused fields are 0. */
typedef struct DmshLowering {
    uint32_t pass;                   /* DMSH_PASS_*                                        */
    uint32_t record_bytes;           /* bytes per vertex record (576)                      */
    uint32_t input_vertices;         /* geometry: vertices per input primitive             */
    uint32_t invocations;            /* geometry: invocations per input primitive          */
    uint32_t max_vertices;           /* geometry: most vertices one invocation emits       */
    uint32_t output;                 /* geometry: DMSH_PRIM_* of the final draw            */
    uint32_t indices_per_invocation; /* geometry: index entries per invocation             */
    uint32_t topologies;             /* geometry: bit n = VkPrimitiveTopology n assembled
                                        (0 point_list, 1 line_list, 2 line_strip,
                                        3 triangle_list, 4 triangle_strip, 5 triangle_fan,
                                        6 line_list_adjacency, 7 line_strip_adjacency,
                                        8 triangle_list_adjacency,
                                        9 triangle_strip_adjacency)                       */
    uint32_t local_size;             /* kernels: threads per threadgroup                   */
    uint32_t primitive_id_location;  /* geometry: varying carrying gl_PrimitiveID to the
                                        fragment shader's _q variant, or DMSH_NO_INDEX     */
    uint32_t control_points;         /* tessellation: output control points per patch      */
    uint32_t factor_bytes;           /* tessellation: bytes per patch in tess_factors (8,
                                        12; 0: the control kernel's params[4] chooses)     */
    uint32_t patch_bytes;            /* tessellation: bytes per patch record               */
    uint32_t tess_domain;            /* evaluation: DMSH_TESS_DOMAIN_* (0 none)             */
    uint32_t tess_spacing;           /* evaluation: DMSH_TESS_SPACING_* (0 none)            */
    uint32_t tess_output;            /* evaluation: DMSH_TESS_OUTPUT_* (0 none)             */
} DmshLowering;

/* One built shader (or variant); owned by its title, valid until dmsh_close. */
typedef struct DmshShader {
    uint64_t key;
    uint32_t stage;                 /* DMSH_STAGE_*: the key's stage in the map       */
    uint32_t flags;                 /* DMSH_SHADER_*                                 */
    const char *library_path;       /* b-<V>/<key>_b.metallib (variants: _p, _g, _q)  */
    const char *source_path;        /* b-<V>/<key>_b.metal (variants: _p, _g, _q)     */
    const char *entry_gl;           /* main0                                         */
    const char *entry_zero_one;     /* main0_z on vertex shaders, else main0         */
    const DmshBinding *bindings;    /* binding_count                                 */
    const DmshRange *reads;         /* read_count (cbuf read_first / read_count)     */
    const DmshIo *inputs;           /* input_count (vertex: attribute types)         */
    const DmshIo *outputs;          /* output_count (fragment: colour targets)       */
    uint32_t binding_count;
    uint32_t read_count;
    uint32_t input_count;
    uint32_t output_count;
    uint32_t metal_buffers;         /* host buffers start at this index              */
    uint32_t metal_textures;
    uint32_t metal_samplers;
    uint32_t local_size[3];         /* compute                                       */
    uint32_t shared_bytes;          /* compute                                       */
    uint32_t local_bytes;
    const DmshLowering *lowering;   /* the lowered pass it is; NULL: a direct shader  */
} DmshShader;

/* What dmsh_open opens. Set `size` to sizeof(DmshOpenParams): fields are appended in later
   versions and read only when `size` covers them (a block that ends after `chain`, from
   before the warm-up lists, opens with the seed list next to the map and no device list). */
typedef struct DmshOpenParams {
    uint32_t size;
    uint32_t flags;           /* DMSH_OPEN_*                                          */
    const char *shader_map;   /* shader_map.tsv; NULL: the keys b-<V>/_b_build.json
                                 records (a Vulkan capture build has no map)          */
    const char *library_dir;  /* the folder holding b-<V>/; required                  */
    const char *c1_list;      /* c1_full.tsv; NULL: next to the shader map (no map:
                                 none; captures have no guest constant banks)         */
    const char *chain;        /* the chain version V; NULL: compiled in (DMSH_CHAIN)  */
    const char *pso_manifest; /* seed warm-up list; NULL: pso_manifest.tsv next to the
                                 shader map (no map: none)                            */
    const char *pso_user;     /* device warm-up list (pso_user.tsv next to the save
                                 folder); NULL: none, and dmsh_warm_append refuses     */
} DmshOpenParams;

/* One warm-up row, resolved to the open title's shaders; owned by it. Rows come seed list
   first, then device list, each in its file's order (the pre-build order). */
typedef struct DmshWarmRow {
    uint32_t kind;               /* DMSH_WARM_*                                         */
    uint32_t list;               /* DMSH_WARM_SEED or DMSH_WARM_DEVICE                  */
    uint32_t line;               /* its line in that list (1 is the header)             */
    uint32_t depth;              /* R: DMSH_DEPTH_*; else DMSH_DEPTH_GL                 */
    const DmshShader *shader;    /* S, C: the shader; R: the vertex shader              */
    const DmshShader *fragment;  /* R: the fragment shader, NULL for none; else NULL    */
    const char *entry;           /* shader's entry point for `depth` (main0 / main0_z)  */
    const char *fragment_entry;  /* fragment's entry point, or NULL                     */
    const uint8_t *state;        /* R: the host's pipeline settings (NULL when 0 bytes) */
    uint32_t state_len;
} DmshWarmRow;

typedef struct DmshTitle DmshTitle;

/* The message of this thread's last failing call ("" when none); valid until the next
   failing call on this thread (a shader's recorded failure: while its title is open). */
const char *dmsh_last_error(void);

/* The chain version compiled in (DMSH_CHAIN when the library was built), or NULL. */
const char *dmsh_compiled_chain(void);

/* The key of the program the game hands to nvnProgramSetShaders: `control` from the
   control section's first byte (Switch 1: at least its length, control +0x20; NVN2: at
   least 0x64 bytes, 0xD8 when +0x30 is 0), `code` from the code area's first byte (at least
   the code size the section gives). The rule of dmsh split; no allocation. */
DmshStatus dmsh_shader_key(const uint8_t *control, size_t control_len, const uint8_t *code,
                           size_t code_len, uint64_t *key);

/* The key dmsh build --spirv gives a Vulkan module captured without the host's own key:
   the first 16 hex digits of the sha256 of its `len` bytes. No allocation. */
DmshStatus dmsh_spirv_key(const uint8_t *module, size_t len, uint64_t *key);

/* Parses 16 lower-case hex digits; writes 16 digits and a NUL to out[17]. */
DmshStatus dmsh_key_parse(const char *hex, uint64_t *key);
void dmsh_key_format(uint64_t key, char *out);

/* Opens a title: reads the map and c1 list, checks b-<V>. *out is NULL on failure. */
DmshStatus dmsh_open(const DmshOpenParams *params, DmshTitle **out);
void dmsh_close(DmshTitle *title);

/* Looks a key up: its shader and the entry point for `depth` (DMSH_DEPTH_*). Thread-safe;
   after a shader's first lookup (or a DMSH_OPEN_EAGER open) it neither allocates nor reads
   a file. */
DmshStatus dmsh_lookup(const DmshTitle *title, uint64_t key, uint32_t depth,
                       const DmshShader **shader, const char **entry);

/* Looks up a variant of a key (DMSH_VARIANT_*): MAIN is <key>_b (as dmsh_lookup); DRAW
   <key>_p, a geometry key's draw (lowering->pass DMSH_PASS_GEOMETRY_DRAW); CAPTURE <key>_g,
   a vertex key's capture form (DMSH_PASS_VERTEX_CAPTURE); PRIMITIVE_ID <key>_q, a fragment
   key's variant reading gl_PrimitiveID (no lowering); DUAL_SOURCE <key>_d, a Vulkan fragment
   module's dual-source form (no lowering). A variant that was not built (or that
   the key's stage cannot have) is DMSH_ERR_NOT_BUILT naming the key and file; one whose
   reflection does not carry its pass is DMSH_ERR_REFLECTION; an unknown variant
   DMSH_ERR_ARGUMENT. Thread-safe; after a variant's first lookup (or a DMSH_OPEN_EAGER open)
   it neither allocates nor reads a file. */
DmshStatus dmsh_lookup_pass(const DmshTitle *title, uint64_t key, uint32_t variant,
                            uint32_t depth, const DmshShader **shader, const char **entry);

/* Whether a geometry kernel (a geometry key's <key>_b, lowering->pass
   DMSH_PASS_GEOMETRY_KERNEL) assembles draws of VkPrimitiveTopology `vk_topology`: DMSH_OK,
   or DMSH_ERR_TOPOLOGY with dmsh_last_error() naming the key, the topology asked and the
   ones served (refuse, split or convert such a draw; drawing it would be silently wrong).
   NULL or a shader that is not a geometry kernel: DMSH_ERR_ARGUMENT. No allocation on
   DMSH_OK. */
DmshStatus dmsh_check_topology(const DmshShader *kernel, uint32_t vk_topology);

/* The map's keys (sorted), V, and the c1 list's state (DMSH_OK or DMSH_ERR_C1_*). */
uint32_t dmsh_title_key_count(const DmshTitle *title);
uint64_t dmsh_title_key_at(const DmshTitle *title, uint32_t i);
const char *dmsh_title_chain(const DmshTitle *title);
DmshStatus dmsh_title_c1_status(const DmshTitle *title, const char **message);

/* The warm-up rows: count, and the i-th (NULL past the end). No allocation. Their shaders
   were loaded at open, so looking them up never reads a file. */
uint32_t dmsh_warm_count(const DmshTitle *title);
const DmshWarmRow *dmsh_warm_row(const DmshTitle *title, uint32_t i);

/* A warm-up list's state (list: DMSH_WARM_SEED / DMSH_WARM_DEVICE): DMSH_OK when read, else
   DMSH_ERR_WARM_MISSING or DMSH_ERR_WARM_BAD (nothing pre-built from it; the other list is
   still read). *rows, *skipped: its rows and the lines skipped (a build cannot use them);
   *message: why it is not used, or the skipped lines with their reasons (the first 64), or
   "" (valid while the title is open). Each out pointer may be NULL. */
DmshStatus dmsh_warm_list(const DmshTitle *title, uint32_t list, uint32_t *rows,
                          uint32_t *skipped, const char **message);

/* Appends a row built on the spot to the device list crash-safely (a temporary file in its
   folder with the old rows and the new one, fsync, rename over it, fsync the folder: a kill
   leaves the old list or the new one). R rows: fragment_key (NULL: none), depth and
   state_len bytes of the host's settings; S and C rows: NULL, DMSH_DEPTH_GL, NULL, 0. A row
   already listed is not written again. Thread-safe; rows read at open do not change. */
DmshStatus dmsh_warm_append(const DmshTitle *title, uint32_t kind, uint64_t key,
                            const uint64_t *fragment_key, uint32_t depth, const uint8_t *state,
                            size_t state_len);

#ifdef __cplusplus
}
#endif

#endif /* DMSH_RUNTIME_H */
