/*
 * An example host: links dmsh-runtime and walks a built title the way a game's host does —
 * open, look every key up in both depth modes, read every array. It prints one block per
 * shader (the test c_example compares it with the build's JSON) and a summary line.
 *
 *   example_host MAP LIBRARY_DIR CHAIN [SEED DEVICE]   walk the title (and its warm-up
 *                                                      lists; then append to DEVICE)
 *   example_host layout                  print the ABI structs' sizes and offsets
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dmsh_runtime.h"

#define FIELD(T, f) printf("offset %s.%s %zu\n", #T, #f, offsetof(T, f))

static void layout(void) {
    printf("size DmshBinding %zu\n", sizeof(DmshBinding));
    FIELD(DmshBinding, kind);
    FIELD(DmshBinding, slot);
    FIELD(DmshBinding, guest_offset);
    FIELD(DmshBinding, vk_binding);
    FIELD(DmshBinding, metal_index);
    FIELD(DmshBinding, metal_sampler);
    FIELD(DmshBinding, count);
    FIELD(DmshBinding, flags);
    FIELD(DmshBinding, read_first);
    FIELD(DmshBinding, read_count);
    FIELD(DmshBinding, size);
    printf("size DmshRange %zu\n", sizeof(DmshRange));
    FIELD(DmshRange, start);
    FIELD(DmshRange, end);
    printf("size DmshIo %zu\n", sizeof(DmshIo));
    FIELD(DmshIo, location);
    FIELD(DmshIo, component_type);
    FIELD(DmshIo, index);
    printf("size DmshShader %zu\n", sizeof(DmshShader));
    FIELD(DmshShader, key);
    FIELD(DmshShader, stage);
    FIELD(DmshShader, flags);
    FIELD(DmshShader, library_path);
    FIELD(DmshShader, source_path);
    FIELD(DmshShader, entry_gl);
    FIELD(DmshShader, entry_zero_one);
    FIELD(DmshShader, bindings);
    FIELD(DmshShader, reads);
    FIELD(DmshShader, inputs);
    FIELD(DmshShader, outputs);
    FIELD(DmshShader, binding_count);
    FIELD(DmshShader, read_count);
    FIELD(DmshShader, input_count);
    FIELD(DmshShader, output_count);
    FIELD(DmshShader, metal_buffers);
    FIELD(DmshShader, metal_textures);
    FIELD(DmshShader, metal_samplers);
    FIELD(DmshShader, local_size);
    FIELD(DmshShader, shared_bytes);
    FIELD(DmshShader, local_bytes);
    FIELD(DmshShader, lowering);
    printf("size DmshLowering %zu\n", sizeof(DmshLowering));
    FIELD(DmshLowering, pass);
    FIELD(DmshLowering, record_bytes);
    FIELD(DmshLowering, input_vertices);
    FIELD(DmshLowering, invocations);
    FIELD(DmshLowering, max_vertices);
    FIELD(DmshLowering, output);
    FIELD(DmshLowering, indices_per_invocation);
    FIELD(DmshLowering, topologies);
    FIELD(DmshLowering, local_size);
    FIELD(DmshLowering, primitive_id_location);
    FIELD(DmshLowering, control_points);
    FIELD(DmshLowering, factor_bytes);
    FIELD(DmshLowering, patch_bytes);
    FIELD(DmshLowering, tess_domain);
    FIELD(DmshLowering, tess_spacing);
    FIELD(DmshLowering, tess_output);
    printf("size DmshOpenParams %zu\n", sizeof(DmshOpenParams));
    FIELD(DmshOpenParams, size);
    FIELD(DmshOpenParams, flags);
    FIELD(DmshOpenParams, shader_map);
    FIELD(DmshOpenParams, library_dir);
    FIELD(DmshOpenParams, c1_list);
    FIELD(DmshOpenParams, chain);
    FIELD(DmshOpenParams, pso_manifest);
    FIELD(DmshOpenParams, pso_user);
    printf("size DmshWarmRow %zu\n", sizeof(DmshWarmRow));
    FIELD(DmshWarmRow, kind);
    FIELD(DmshWarmRow, list);
    FIELD(DmshWarmRow, line);
    FIELD(DmshWarmRow, depth);
    FIELD(DmshWarmRow, shader);
    FIELD(DmshWarmRow, fragment);
    FIELD(DmshWarmRow, entry);
    FIELD(DmshWarmRow, fragment_entry);
    FIELD(DmshWarmRow, state);
    FIELD(DmshWarmRow, state_len);
}

/* Walks the warm-up rows in pre-build order the way a host's background thread does: one
   line per row (the test compares them with the lists it wrote and the build's JSON), one
   per list with its state, then appends a row built "on the spot" to the device list. */
static int walk_warm(const DmshTitle *t) {
    uint32_t n = dmsh_warm_count(t), i, l;
    static const char kinds[] = "?SRC";
    for (i = 0; i < n; i++) {
        const DmshWarmRow *r = dmsh_warm_row(t, i);
        char key[17], frag[17] = "-";
        uint32_t b;
        if (r == NULL || r->kind < 1 || r->kind > 3 || r->shader == NULL) {
            fprintf(stderr, "warm row %u is malformed\n", i);
            return 1;
        }
        dmsh_key_format(r->shader->key, key);
        if (r->fragment != NULL)
            dmsh_key_format(r->fragment->key, frag);
        printf("warm %u %u %c %s %s %u %s %s ", r->list, r->line, kinds[r->kind], key, frag,
               r->depth, r->entry, r->fragment_entry != NULL ? r->fragment_entry : "-");
        for (b = 0; b < r->state_len; b++)
            printf("%02x", r->state[b]);
        printf("\n");
    }
    if (dmsh_warm_row(t, n) != NULL) {
        fprintf(stderr, "a row past the end\n");
        return 1;
    }
    for (l = DMSH_WARM_SEED; l <= DMSH_WARM_DEVICE; l++) {
        uint32_t rows = 0, skipped = 0;
        const char *m = NULL;
        DmshStatus s = dmsh_warm_list(t, l, &rows, &skipped, &m);
        printf("warmlist %u %u %u %u\n", l, s, rows, skipped);
        fprintf(stderr, "warm-up list %u: %s\n", l, m);
    }
    {
        uint64_t first = dmsh_title_key_at(t, 0);
        if (dmsh_warm_append(t, DMSH_WARM_SHADER, first, NULL, DMSH_DEPTH_GL, NULL, 0) !=
                DMSH_OK ||
            dmsh_warm_append(t, 9, first, NULL, DMSH_DEPTH_GL, NULL, 0) != DMSH_ERR_ARGUMENT) {
            fprintf(stderr, "append: %s\n", dmsh_last_error());
            return 1;
        }
    }
    return 0;
}

static void print_shader(const DmshShader *s, const char *z_entry) {
    char hex[17];
    uint32_t i;
    dmsh_key_format(s->key, hex);
    printf("shader %s stage=%u flags=%u gl=%s z=%s lib=%s src=%s tables=%u,%u,%u "
           "local=%u,%u,%u shared=%u lbytes=%u\n",
           hex, s->stage, s->flags, s->entry_gl, z_entry, s->library_path, s->source_path,
           s->metal_buffers, s->metal_textures, s->metal_samplers, s->local_size[0],
           s->local_size[1], s->local_size[2], s->shared_bytes, s->local_bytes);
    if (s->lowering != NULL) {
        const DmshLowering *l = s->lowering;
        printf("lower %u %u %u %u %u %u %u %u %u %u %u %u %u %u %u %u\n", l->pass,
               l->record_bytes, l->input_vertices, l->invocations, l->max_vertices, l->output,
               l->indices_per_invocation, l->topologies, l->local_size,
               l->primitive_id_location, l->control_points, l->factor_bytes, l->patch_bytes,
               l->tess_domain, l->tess_spacing, l->tess_output);
    }
    for (i = 0; i < s->binding_count; i++) {
        const DmshBinding *b = &s->bindings[i];
        printf("bind %u %u %u %u %u %u %u %u %u %u %llu\n", b->kind, b->slot, b->guest_offset,
               b->vk_binding, b->metal_index, b->metal_sampler, b->count, b->flags,
               b->read_first, b->read_count, (unsigned long long)b->size);
    }
    for (i = 0; i < s->read_count; i++)
        printf("read %u %u\n", s->reads[i].start, s->reads[i].end);
    for (i = 0; i < s->input_count; i++)
        printf("in %u %u %u\n", s->inputs[i].location, s->inputs[i].component_type,
               s->inputs[i].index);
    for (i = 0; i < s->output_count; i++)
        printf("out %u %u %u\n", s->outputs[i].location, s->outputs[i].component_type,
               s->outputs[i].index);
}

/* Walks the lowered pipelines' variants of every key (a host assembling a geometry or
   tessellation draw): `variant KEY SUFFIX` and the record for each one built, and for each
   geometry kernel the topologies dmsh_check_topology accepts (`topology KEY MASK`); an
   unserved topology must be DMSH_ERR_TOPOLOGY naming the key. */
static int walk_variants(const DmshTitle *t) {
    static const char *suffix[] = {"_b", "_p", "_g", "_q", "_d"};
    static const uint32_t pass[] = {DMSH_PASS_NONE, DMSH_PASS_GEOMETRY_DRAW,
                                    DMSH_PASS_VERTEX_CAPTURE, DMSH_PASS_NONE, DMSH_PASS_NONE};
    uint32_t n = dmsh_title_key_count(t), i, v, topo;
    for (i = 0; i < n; i++) {
        uint64_t key = dmsh_title_key_at(t, i);
        const DmshShader *s = NULL, *b = NULL;
        const char *e = NULL;
        char hex[17];
        dmsh_key_format(key, hex);
        if (dmsh_lookup(t, key, DMSH_DEPTH_GL, &b, &e) != DMSH_OK)
            continue;
        for (v = DMSH_VARIANT_DRAW; v <= DMSH_VARIANT_DUAL_SOURCE; v++) {
            DmshStatus st = dmsh_lookup_pass(t, key, v, DMSH_DEPTH_ZERO_TO_ONE, &s, &e);
            if (st == DMSH_ERR_NOT_BUILT) {
                if (strstr(dmsh_last_error(), hex) == NULL) {
                    fprintf(stderr, "%s%s: NOT_BUILT without the key: %s\n", hex, suffix[v],
                            dmsh_last_error());
                    return 1;
                }
                continue;
            }
            if (st != DMSH_OK) {
                fprintf(stderr, "%s%s: %s\n", hex, suffix[v], dmsh_last_error());
                return 1;
            }
            if ((pass[v] == DMSH_PASS_NONE) != (s->lowering == NULL) ||
                (s->lowering != NULL && s->lowering->pass != pass[v]) || s->key != key) {
                fprintf(stderr, "%s%s: not the variant's pass\n", hex, suffix[v]);
                return 1;
            }
            printf("variant %s %s\n", hex, suffix[v]);
            print_shader(s, e);
        }
        if (b->lowering != NULL && b->lowering->pass == DMSH_PASS_GEOMETRY_KERNEL) {
            uint32_t mask = 0;
            for (topo = 0; topo < 16; topo++) {
                DmshStatus st = dmsh_check_topology(b, topo);
                if (st == DMSH_OK)
                    mask |= 1u << topo;
                else if (st != DMSH_ERR_TOPOLOGY || strstr(dmsh_last_error(), hex) == NULL) {
                    fprintf(stderr, "%s: topology %u: %u %s\n", hex, topo, st,
                            dmsh_last_error());
                    return 1;
                }
            }
            if (mask != b->lowering->topologies) {
                fprintf(stderr, "%s: topologies %u, the record says %u\n", hex, mask,
                        b->lowering->topologies);
                return 1;
            }
            printf("topology %s %u\n", hex, mask);
        } else if (dmsh_check_topology(b, 3) != DMSH_ERR_ARGUMENT) {
            fprintf(stderr, "%s: dmsh_check_topology took a shader that is no kernel\n", hex);
            return 1;
        }
    }
    if (dmsh_check_topology(NULL, 3) != DMSH_ERR_ARGUMENT) {
        fprintf(stderr, "dmsh_check_topology took NULL\n");
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    DmshOpenParams p;
    DmshTitle *t = NULL;
    const char *c1_message = NULL;
    uint32_t n, i, built = 0, failed = 0;

    if (argc == 2 && strcmp(argv[1], "layout") == 0) {
        layout();
        return 0;
    }
    if (argc != 4 && argc != 6) {
        fprintf(stderr, "usage: %s MAP LIBRARY_DIR CHAIN [SEED DEVICE] | layout\n", argv[0]);
        return 2;
    }
    memset(&p, 0, sizeof p);
    p.size = sizeof p;
    p.shader_map = argv[1];
    p.library_dir = argv[2];
    p.chain = argv[3];
    if (argc == 6) {
        p.pso_manifest = argv[4];
        p.pso_user = argv[5];
    }
    if (dmsh_open(&p, &t) != DMSH_OK || t == NULL) {
        fprintf(stderr, "open: %s\n", dmsh_last_error());
        return 1;
    }
    if (dmsh_title_c1_status(t, &c1_message) != DMSH_OK)
        fprintf(stderr, "c1: %s\n", c1_message);
    n = dmsh_title_key_count(t);
    for (i = 0; i < n; i++) {
        uint64_t key = dmsh_title_key_at(t, i), back = 0;
        const DmshShader *gl = NULL, *z = NULL;
        const char *gl_entry = NULL, *z_entry = NULL;
        char hex[17];
        DmshStatus s;
        dmsh_key_format(key, hex);
        if (dmsh_key_parse(hex, &back) != DMSH_OK || back != key) {
            fprintf(stderr, "key %s does not round-trip\n", hex);
            return 1;
        }
        s = dmsh_lookup(t, key, DMSH_DEPTH_GL, &gl, &gl_entry);
        if (s != DMSH_OK) {
            printf("fail %s %u\n", hex, s);
            fprintf(stderr, "%s: %s\n", hex, dmsh_last_error());
            failed++;
            continue;
        }
        if (dmsh_lookup(t, key, DMSH_DEPTH_ZERO_TO_ONE, &z, &z_entry) != DMSH_OK || z != gl ||
            strcmp(gl_entry, gl->entry_gl) != 0 || strcmp(z_entry, z->entry_zero_one) != 0) {
            fprintf(stderr, "%s: the depth modes disagree\n", hex);
            return 1;
        }
        print_shader(z, z_entry);
        built++;
    }
    {
        const DmshShader *s = NULL;
        const char *e = NULL;
        if (dmsh_lookup(t, 0, DMSH_DEPTH_GL, &s, &e) != DMSH_ERR_UNKNOWN_KEY || s != NULL ||
            dmsh_lookup(t, dmsh_title_key_at(t, 0), 7, &s, &e) != DMSH_ERR_ARGUMENT ||
            dmsh_lookup(NULL, 0, DMSH_DEPTH_GL, &s, &e) != DMSH_ERR_ARGUMENT) {
            fprintf(stderr, "bad lookups were not refused\n");
            return 1;
        }
    }
    {
        const DmshShader *s = NULL;
        const char *e = NULL;
        if (dmsh_lookup_pass(t, dmsh_title_key_at(t, 0), 9, DMSH_DEPTH_GL, &s, &e) !=
                DMSH_ERR_ARGUMENT ||
            s != NULL) {
            fprintf(stderr, "an unknown variant was not refused\n");
            return 1;
        }
    }
    if (walk_variants(t) != 0)
        return 1;
    if (argc == 6 && walk_warm(t) != 0)
        return 1;
    fprintf(stderr, "example_host: b-%s: %u keys, %u found, %u failed, %u warm-up rows\n",
            dmsh_title_chain(t), n, built, failed, dmsh_warm_count(t));
    dmsh_close(t);
    return 0;
}
