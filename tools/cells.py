"""
The cells of the results tables: a cell is one entry of a table, a model x a method x a length (x a depth for passkey),
with the n it reached. Read from the result JSONs of long, resumable runs, each cell finished, under way or still to
run. A page that quotes a run under way quotes this file, not a table copied by hand.

  python -m tools.cells --inputs=results/pretrained/gemma3_bos_plain.json,results/pretrained/gemma3_bos_passkey.json

A cell of a last-token perplexity JSON (extrapolate.py) is a run, a variant and a length: its perplexity over n
inputs of settings.last_k scored tokens each; a cell under way counts the inputs its losses_so_far holds. The
variants a file's command asks for come from that command, so a variant not begun is listed too, with n = 0. A cell
of a passkey JSON (analysis.passkey) is a variant, a length and a depth: the keys greedily matched, of those scored
(under way: the keys its keys_so_far holds), and per length the keys matched over all depths. A cell of a stream
JSON is a row of its command's stream_rows, over its tokens. A cell of an ERF JSON (analysis.receptive_field) is a
run and a variant: its ERF over n segments (under way: the segments its segments_so_far counts). Any other JSON is one
line; a file not made yet, one line with n = 0. Writes <name>.md and <name>.json (with the command) under out_dir.
"""
import os
import shlex

from lexgpt.config import ConfigError, parse_config, run
from lexgpt.evaluation import extension, variants
from lexgpt.outputs import fmt_ppl, md_table, read_json, write_outputs

DEFAULTS = dict(
    inputs=[],                  # result JSONs, in the order the table lists them
    out_dir='out/cells',
    name='cells',
)


def command_settings(command, defaults=None):
    """The settings a command ran with: its --key=value over the script's defaults (default: extrapolate.py's)."""
    if defaults is None:
        import extrapolate  # here, not at the top: only extrapolate.py's JSONs need its defaults
        defaults = extrapolate.DEFAULTS
    return parse_config(defaults, [a for a in shlex.split(command)[2:] if a.startswith('--')])


def run_names(data, cfg):
    """The runs a file's rows name, in their order; before its first row, its command's ckpt and extension label."""
    return list(dict.fromkeys(r['ckpt'] for r in data['results'])) or [','.join(cfg['ckpt']) + extension(cfg)[0]]


def ppl_cells(data):
    """The cells of extrapolate.py's JSON: (run, variant, mult, L_ex, value, inputs scored, inputs asked for)."""
    cfg = command_settings(data['command'])
    labels = [label for label, _ in variants(cfg)]
    per_input, asked = data['settings']['last_k'], data['settings']['n']
    rows = {(r['ckpt'], r['variant'], r['mult']): r for r in data['results']}
    runs = run_names(data, cfg)
    L_trs = {r['L_tr'] for r in data['results']}
    L_tr = L_trs.pop() if len(L_trs) == 1 else None
    out = []
    for name in runs:
        for label in labels:
            for m in data['lengths']:
                r = rows.get((name, label, m), {})
                if r.get('loss') is not None:
                    value, done = fmt_ppl(r['ppl']), r['n_scored'] // per_input
                else:  # under way (the inputs scored so far) or not begun
                    value, done = '', len(r.get('losses_so_far', ())) // per_input
                L_ex = r.get('L_ex') or (round(m * L_tr) if L_tr else None)
                out.append((name, label, m, L_ex, value, done, asked))
    return out


def passkey_cells(data):
    """The cells of analysis.passkey's JSON: (run, variant, mult, L_ex, 'depth d: matched/keys', keys, keys), and
    after each length's depths their total, 'all depths: matched/prompts' once every depth is finished."""
    n_keys, n_depths, out = len(data['keys']), len(data['depths']), []
    rows = data['results'] or [dict(ckpt='', variant='vanilla', cells=[])]
    for row in rows:
        cells = {(c['mult'], c['depth']): c for c in row['cells']}
        for m in data['lengths']:
            matched, scored, L_ex = 0, 0, None
            for d in data['depths']:
                c = cells.get((m, d), {})
                L_ex = c.get('L_ex') or L_ex
                if c.get('accuracy') is not None:
                    hits = round(c['accuracy'] * n_keys)
                    value, done = f"depth {d:g}: {hits}/{n_keys} exact, mean log-prob {c['mean_logprob']:.2f}", n_keys
                    matched += hits
                else:  # under way (the keys scored so far) or not begun
                    value, done = f'depth {d:g}', len(c.get('keys_so_far', ()))
                scored += done
                out.append((row['ckpt'], row['variant'], m, c.get('L_ex'), value, done, n_keys))
            total = n_keys * n_depths
            value = f'all depths: {matched}/{total} exact' if scored == total else 'all depths'
            out.append((row['ckpt'], row['variant'], m, L_ex, value, scored, total))
    return out


def stream_cells(data):
    """The rows of a stream JSON: (run, row, no length, tokens, perplexity, tokens streamed, tokens asked for)."""
    cfg = command_settings(data['command'])
    rows = {(r['ckpt'], r['row']): r for r in data['results']}
    runs = list(dict.fromkeys(r['ckpt'] for r in data['results'])) or [','.join(cfg['ckpt'])]
    return [(name, row, None, cfg['tokens'], fmt_ppl(rows[name, row]['ppl']) if (name, row) in rows else '',
             rows[name, row]['n_tokens'] if (name, row) in rows else 0, cfg['tokens'])
            for name in runs for row in cfg['stream_rows']]


def erf_cells(data):
    """The rows of an ERF JSON: (run, variant, mult, L_ex, 'ERF k tokens', segments, segments asked for), a variant
    its command asks for and not begun with n = 0."""
    from analysis import receptive_field  # as extrapolate.py above
    cfg = command_settings(data['command'], receptive_field.DEFAULTS)
    rows = {(r['ckpt'], r['variant']): r for r in data['results']}
    runs = run_names(data, cfg)
    out = []
    for name in runs:
        for label, _ in variants(cfg):
            r = rows.get((name, label), {})
            done = cfg['n'] if 'erf' in r else r.get('segments_so_far', 0)
            value = f"ERF {r['erf']:,} tokens" if 'erf' in r else ''
            out.append((name, label, cfg['length'], r.get('L_ex'), value, done, cfg['n']))
    return out


def cells_of(path):
    """(state of the file, its cells) for one result JSON; a file not made yet has no cells."""
    if not os.path.exists(path):
        return 'not made yet', []
    data = read_json(path, 'inputs')
    if 'depths' in data:
        cells = passkey_cells(data)
    elif data.get('protocol') == 'stream':
        cells = stream_cells(data)
    elif data.get('protocol') == 'last_token':
        cells = ppl_cells(data)
    elif 'receptive_field' in data['command']:
        cells = erf_cells(data)
    else:  # a protocol that keeps no inputs so far
        return ('under way' if data.get('partial') else 'finished'), []
    finished = all(done == asked for *_, done, asked in cells)
    return 'finished' if finished else 'under way', cells


def main(cfg):
    paths = cfg['inputs']
    if not paths:
        raise ConfigError("inputs is empty; give result JSONs, e.g. --inputs=results/pretrained/gemma3_bos_plain.json")
    table, found = [], []
    for path in paths:
        state, cells = cells_of(path)
        found.append(dict(file=path, state=state, cells=[dict(zip(
            ('run', 'variant', 'mult', 'L_ex', 'value', 'n', 'n_asked'), c)) for c in cells]))
        if not cells:
            table.append((os.path.basename(path), state, '', '', '', '', '' if state == 'finished' else '0'))
        for run_name, label, m, L_ex, value, done, asked in cells:
            table.append((os.path.basename(path), run_name, label, f'{m:g} L_tr' if m else '',
                          f'{L_ex:,}' if L_ex else '', value, f'{done:,} of {asked:,}'))
    md = ("Each cell of the result files named, with the n it reached (perplexity: inputs scored; passkey: keys; "
          "stream: tokens; ERF: segments). An empty value: not finished.\n\n"
          + md_table(['file', 'run', 'variant', 'length', 'L_ex', 'value', 'n'], table))
    write_outputs(cfg['out_dir'], cfg['name'], dict(files=found), md)
    print(md)
    return found


if __name__ == '__main__':
    run(main, DEFAULTS, __doc__)
