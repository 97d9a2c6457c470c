"""tools/cells.py: the cells of result JSONs with the n each reached, against files whose counts are known by hand."""
import json

import pytest

from lexgpt.config import ConfigError
from tools import cells

PPL_COMMAND = 'python extrapolate.py --ckpt=out/m --lengths=1,2 --n=4 --last_k=2 --windowed=True --out_dir=results/x'


def ppl_file(tmp_path):
    """A perplexity JSON under way: vanilla at 1x finished (4 inputs x 2 tokens), at 2x 3 inputs scored so far; the
    windowed variant its command asks for not begun."""
    row = dict(ckpt='m', variant='vanilla', L_tr=16)
    data = dict(command=PPL_COMMAND, partial=True, protocol='last_token', lengths=[1.0, 2.0],
                settings=dict(n=4, last_k=2), results=[
            dict(row, mult=1.0, L_ex=16, loss=1.0, ppl=2.718281828, n_scored=8),
            dict(row, mult=2.0, L_ex=32, loss=None, ppl=None, losses_so_far=[0.5] * 6)])
    path = tmp_path / 'ppl.json'
    path.write_text(json.dumps(data))
    return str(path)


def test_a_perplexity_file_under_way_counts_inputs_not_tokens_and_lists_the_variants_not_begun(tmp_path):
    state, got = cells.cells_of(ppl_file(tmp_path))
    assert state == 'under way'
    assert got == [('m', 'vanilla', 1.0, 16, '2.718', 4, 4), ('m', 'vanilla', 2.0, 32, '', 3, 4),
                   ('m', 'windowed@L_tr', 1.0, 16, '', 0, 4), ('m', 'windowed@L_tr', 2.0, 32, '', 0, 4)]


def test_passkey_cells_count_the_keys_matched_scored_so_far_and_not_run(tmp_path):
    cell = dict(mult=1.0, L_ex=64, depth=0.0, accuracy=0.5, mean_logprob=-1.25)
    half = dict(mult=1.0, L_ex=64, depth=0.5, accuracy=None, keys_so_far=[dict(exact=True)])
    data = dict(command='python -m analysis.passkey', keys=['11111', '22222'], depths=[0.0, 0.5, 1.0], lengths=[1.0],
                results=[dict(ckpt='m', variant='vanilla', cells=[cell, half])])
    (tmp_path / 'pk.json').write_text(json.dumps(data))
    state, got = cells.cells_of(str(tmp_path / 'pk.json'))
    assert state == 'under way'
    assert got == [('m', 'vanilla', 1.0, 64, 'depth 0: 1/2 exact, mean log-prob -1.25', 2, 2),
                   ('m', 'vanilla', 1.0, 64, 'depth 0.5', 1, 2), ('m', 'vanilla', 1.0, None, 'depth 1', 0, 2),
                   ('m', 'vanilla', 1.0, 64, 'all depths', 3, 6)]


def test_a_passkey_file_before_its_first_row_lists_every_depth_not_run(tmp_path):
    """A passkey JSON written before any run has a row: one row with no run name, each depth of each length at 0 of
    its keys, and the length's total at 0 of keys x depths."""
    data = dict(command='python -m analysis.passkey', keys=['11111', '22222'], depths=[0.0, 1.0], lengths=[1.0, 2.0],
                partial=True, results=[])
    (tmp_path / 'pk.json').write_text(json.dumps(data))
    state, got = cells.cells_of(str(tmp_path / 'pk.json'))
    assert state == 'under way' and got == [('', 'vanilla', m, None, v, 0, n) for m in (1.0, 2.0) for v, n in (
        ('depth 0', 2), ('depth 1', 2), ('all depths', 4))]


def test_a_length_whose_depths_all_finished_totals_the_keys_matched(tmp_path):
    # by hand: 2 of 2 keys at depth 0, 1 of 2 at depth 1 -> 3 of the 4 prompts at this length
    done = [dict(mult=1.0, L_ex=64, depth=0.0, accuracy=1.0, mean_logprob=-0.1),
            dict(mult=1.0, L_ex=64, depth=1.0, accuracy=0.5, mean_logprob=-0.7)]
    data = dict(command='python -m analysis.passkey', keys=['11111', '22222'], depths=[0.0, 1.0], lengths=[1.0],
                results=[dict(ckpt='m', variant='vanilla', cells=done)])
    (tmp_path / 'pk.json').write_text(json.dumps(data))
    state, got = cells.cells_of(str(tmp_path / 'pk.json'))
    assert state == 'finished' and got[-1] == ('m', 'vanilla', 1.0, 64, 'all depths: 3/4 exact', 4, 4)


def test_a_stream_lists_its_commands_rows(tmp_path):
    data = dict(command='python extrapolate.py --ckpt=m --protocol=stream --tokens=500 --stream_rows=sinks,no_sinks',
                protocol='stream', results=[dict(ckpt='m', row='sinks', ppl=3.5, n_tokens=500)])
    (tmp_path / 's.json').write_text(json.dumps(data))
    assert cells.cells_of(str(tmp_path / 's.json')) == ('under way', [('m', 'sinks', None, 500, '3.500', 500, 500),
                                                                      ('m', 'no_sinks', None, 500, '', 0, 500)])
    cells.main(dict(cells.DEFAULTS, inputs=[str(tmp_path / 's.json')], out_dir=str(tmp_path)))
    md = (tmp_path / 'cells.md').read_text()  # a stream has no length: its length cell is empty
    assert '| s.json | m | sinks |  | 500 | 3.500 | 500 of 500 |' in md


def test_erf_cells_count_segments_and_list_the_variants_not_begun(tmp_path):
    """An ERF file under way: vanilla finished (n = 3 segments), windowed@L_tr 2 of 3, lm_infinite not begun."""
    data = dict(command='python -m analysis.receptive_field --ckpt=out/m --length=2 --n=3 --windowed=True '
                        '--lm_infinite=True', partial=True, results=[
                    dict(ckpt='m', variant='vanilla', L_ex=32, erf=1234),
                    dict(ckpt='m', variant='windowed@L_tr', L_ex=32, segments_so_far=2, s_sum_so_far=[0.5] * 32)])
    (tmp_path / 'erf.json').write_text(json.dumps(data))
    assert cells.cells_of(str(tmp_path / 'erf.json')) == ('under way', [
        ('m', 'vanilla', 2.0, 32, 'ERF 1,234 tokens', 3, 3), ('m', 'windowed@L_tr', 2.0, 32, '', 2, 3),
        ('m', 'LM-Inf(n_start=10)', 2.0, None, '', 0, 3)])


def test_the_table_and_json_name_every_file_even_one_not_made(tmp_path):
    path = ppl_file(tmp_path)
    found = cells.main(dict(cells.DEFAULTS, inputs=[path, f'{tmp_path}/none.json'], out_dir=str(tmp_path)))
    assert [(f['file'], f['state'], len(f['cells'])) for f in found] == [(path, 'under way', 4),
                                                                         (f'{tmp_path}/none.json', 'not made yet', 0)]
    md = (tmp_path / 'cells.md').read_text()
    assert '| ppl.json | m | vanilla | 2 L_tr | 32 |  | 3 of 4 |' in md and '| none.json | not made yet |' in md
    assert json.loads((tmp_path / 'cells.json').read_text())['files'] == found
    with pytest.raises(ConfigError, match='inputs is empty'):
        cells.main(dict(cells.DEFAULTS, inputs=[]))


def test_a_file_is_finished_when_every_cell_its_command_asks_for_has_its_n(tmp_path):
    path = ppl_file(tmp_path)
    data = json.load(open(path))
    data['command'] = PPL_COMMAND.replace(' --windowed=True', '')
    data['results'][1].update(loss=1.0, ppl=2.718281828, n_scored=8)
    json.dump(data, open(path, 'w'))
    assert cells.cells_of(path) == ('finished', [('m', 'vanilla', 1.0, 16, '2.718', 4, 4),
                                                 ('m', 'vanilla', 2.0, 32, '2.718', 4, 4)])


def test_a_rope_scaling_file_with_no_rows_yet_is_named_with_its_extension(tmp_path):
    """Before its first row, a file's run is its command's ckpt plus the extension label its rows will carry
    (extrapolate.py names them so): 'out/m+yarn4', apart from the plain model's 'out/m' beside it."""
    data = dict(command=PPL_COMMAND.replace('--windowed=True', '--rope_scaling=yarn --rope_scale=4'), partial=True,
                protocol='last_token', lengths=[1.0, 2.0], settings=dict(n=4, last_k=2), results=[])
    (tmp_path / 'yarn.json').write_text(json.dumps(data))
    assert cells.cells_of(str(tmp_path / 'yarn.json')) == ('under way', [
        ('out/m+yarn4', 'vanilla', 1.0, None, '', 0, 4), ('out/m+yarn4', 'vanilla', 2.0, None, '', 0, 4)])


def test_a_finished_file_without_cells_shows_no_n_and_one_under_way_shows_0(tmp_path):
    """A non-overlapping or sliding file keeps no inputs so far: finished, its n cell is empty (not a count of 0),
    while a partial one says 0."""
    for name, partial in (('nonoverlap', False), ('sliding', True)):
        data = dict(command=f'python extrapolate.py --ckpt=out/m --protocol={name}', protocol=name, results=[])
        (tmp_path / f'{name}.json').write_text(json.dumps(dict(data, partial=True) if partial else data))
    cells.main(dict(cells.DEFAULTS, inputs=[str(tmp_path / f) for f in ('nonoverlap.json', 'sliding.json')],
                    out_dir=str(tmp_path)))
    rows = [line for line in (tmp_path / 'cells.md').read_text().splitlines() if '.json |' in line]
    assert rows == ['| nonoverlap.json | finished |  |  |  |  |  |', '| sliding.json | under way |  |  |  |  | 0 |']
