#!/usr/bin/env python3
"""Header compatibility check: zpmix's PMIx headers against a reference PMIx (OpenPMIx).

Generates one C program from the standard tables (constants.tsv, enums.tsv, layouts.tsv) that
prints every numeric constant, attribute key, enum value, struct size/alignment and field
offset/size; builds and runs it against both header sets and fails on any difference. A second
translation unit redeclares every function prototype and callback type from functions.tsv and
callbacks.tsv and must compile (syntax only) against our headers.

usage: compat_check.py TSV_DIR OUR_INCLUDE_DIR WORK_DIR [REF_CFLAGS...]
"""
import csv
import os
import re
import shlex
import subprocess
import sys


def rows(tsv_dir, name):
    with open(os.path.join(tsv_dir, name)) as f:
        return list(csv.DictReader(f, delimiter='\t', quoting=csv.QUOTE_NONE))


def gen_values(tsv_dir):
    out = ['#include <stddef.h>', '#include <stdio.h>', '#include <pmix.h>',
           '#include <pmix_server.h>', '#include <pmix_tool.h>', '',
           '#ifdef __cplusplus', '#define ZALIGNOF(t) alignof(t)', '#else', '#define ZALIGNOF(t) _Alignof(t)',
           '#endif', '', 'int main(void) {']
    for r in rows(tsv_dir, 'constants.tsv'):
        n = r['name']
        if n == 'PMIX_EXPORT':
            continue
        if r['kind'] == 'attribute':
            out.append('    printf("%%s = %%s\\n", "%s", %s);' % (n, n))
        else:
            out.append('    printf("%%s = %%lld\\n", "%s", (long long)(%s));' % (n, n))
    for r in rows(tsv_dir, 'enums.tsv'):
        n = r['name']
        out.append('    printf("enum %s %%s = %%lld\\n", "%s", (long long)(%s));' % (r['enum_type'], n, n))
    for r in rows(tsv_dir, 'layouts.tsv'):
        s, f = r['struct'], r['field']
        if f == '-':
            out.append('    printf("%s sizeof=%%zu alignof=%%zu\\n", sizeof(%s), (size_t)ZALIGNOF(%s));' % (s, s, s))
        else:
            out.append('    printf("%s.%s offset=%%zu size=%%zu\\n", offsetof(%s, %s), sizeof(((%s *)0)->%s));'
                       % (s, f, s, f, s, f))
    for r in rows(tsv_dir, 'macros.tsv'):
        n = r['name']
        out.append('#ifdef %s\n    printf("macro %s defined\\n");\n#else\n    printf("macro %s MISSING\\n");\n#endif'
                   % (n, n, n))
    out += ['    return 0;', '}', '']
    return '\n'.join(out)


def gen_prototypes(tsv_dir):
    out = ['#include <pmix.h>', '#include <pmix_server.h>', '#include <pmix_tool.h>', '']
    seen = set()
    for r in rows(tsv_dir, 'functions.tsv'):
        if r['signature'] not in seen:
            seen.add(r['signature'])
            out.append('%s;' % r['signature'])  # conflicting types -> compile error
    for r in rows(tsv_dir, 'callbacks.tsv'):
        n = r['name']
        sig = r['signature'].replace('(*%s)' % n, '(*zpmix_chk_%s)' % n, 1)
        out.append('extern %s;' % sig)
        out.append('extern %s zpmix_chk_%s;' % (n, n))  # must be the same type
    return '\n'.join(out) + '\n'


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.stderr.write('command failed: %s\n%s\n' % (' '.join(cmd), p.stdout))
        sys.exit(1)
    return p.stdout


def main():
    tsv_dir, our_inc, work = sys.argv[1], sys.argv[2], sys.argv[3]
    ref_cflags = sys.argv[4:]
    if not ref_cflags:
        try:
            ref_cflags = shlex.split(subprocess.check_output(['pkg-config', '--cflags', 'pmix'], text=True))
        except Exception:
            ref_cflags = ['-I/usr/lib/x86_64-linux-gnu/pmix2/include']
    os.makedirs(work, exist_ok=True)
    cc = os.environ.get('CC', 'cc')
    flags = ['-std=c11', '-Wall', '-Wextra', '-Werror', '-Wno-unused-parameter']
    src = os.path.join(work, 'pmix_values.c')
    with open(src, 'w') as f:
        f.write(gen_values(tsv_dir))
    outputs = {}
    # the reference headers need GNU extensions; ours must build in strict C11 with -Werror
    for tag, cflags in (('reference', ['-std=gnu11', '-w'] + ref_cflags),
                        ('zpmix', flags + ['-pedantic', '-I' + our_inc])):
        exe = os.path.join(work, 'pmix_values_' + tag)
        run([cc] + cflags + [src, '-o', exe])
        outputs[tag] = run([exe]).splitlines()
    protos = os.path.join(work, 'pmix_prototypes.c')
    with open(protos, 'w') as f:
        f.write(gen_prototypes(tsv_dir))
    run([cc] + flags + ['-pedantic', '-I' + our_inc, '-fsyntax-only', protos])
    run(['c++', '-std=c++20', '-Wall', '-Wextra', '-Werror', '-pedantic', '-I' + our_inc,
         '-fsyntax-only', '-x', 'c++', src])
    ref, ours = outputs['reference'], outputs['zpmix']
    diffs = [(a, b) for a, b in zip(ref, ours) if a != b]
    if len(ref) != len(ours):
        diffs.append(('%d lines' % len(ref), '%d lines' % len(ours)))
    for a, b in diffs:
        print('reference: %s\n    zpmix: %s' % (a, b))
    print('%d checks, %d differences' % (len(ref), len(diffs)))
    return 1 if diffs else 0


if __name__ == '__main__':
    sys.exit(main())
