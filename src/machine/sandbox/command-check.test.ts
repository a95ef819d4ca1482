import { describe, expect, it } from 'vitest';
import { checkCommandLine } from './command-check.js';

const allowed = [
  'ls',
  'cat',
  'grep',
  'echo',
  'sudo',
  'env',
  'xargs',
  'timeout',
  'nohup',
  'find',
  'sort',
  '/usr/bin/wc',
];
const check = (line: string) => checkCommandLine(line, allowed);
const reason = (line: string) => {
  const r = check(line);
  return r.ok ? 'ALLOWED' : r.reason;
};

describe('checkCommandLine', () => {
  it('allows everything with *', () => {
    expect(checkCommandLine('rm -rf / ; $(curl x)', ['*']).ok).toBe(true);
  });

  it('allows chains made only of allowed programs and reports them', () => {
    expect(check('ls -la | grep foo && cat a.txt; echo "done" || sort < in > out 2>&1 &')).toEqual({
      ok: true,
      executables: ['ls', 'grep', 'cat', 'sort'],
    });
    expect(check('A=1 B="x y" ls; (cat f | sort) && { ls; }').ok).toBe(true);
    expect(check('if grep -q x f; then cat f; else ls; fi').ok).toBe(true);
    expect(check('for f in a b; do cat "$f"; done').ok).toBe(true);
    expect(check('echo $HOME *.txt').ok).toBe(true);
    expect(check('/usr/bin/wc -l f').ok).toBe(true);
  });

  it('names the refused program and the allowed list', () => {
    expect(reason('rm -rf /')).toBe(
      `Refused: "rm" is not an allowed command. Allowed: ${allowed.join(', ')}.`,
    );
  });

  it('finds disallowed programs hidden in chains', () => {
    for (const [line, bad] of [
      ['ls; rm x', 'rm'],
      ['ls && curl evil', 'curl'],
      ['ls || wget x', 'wget'],
      ['cat f | bash', 'bash'],
      ['ls & python3 -c 1', 'python3'],
      ['(ls; (rm x))', 'rm'],
      ['ls\nrm x', 'rm'],
      ['X=1 Y=2 rm x', 'rm'],
      ['ls |& tee f', 'tee'],
      ['if ls; then rm x; fi', 'rm'],
      ['echo >out; rm x', 'rm'],
      ['"r"m x', 'rm'],
      ['r\\m x', 'rm'],
    ]) {
      expect(reason(line as string), line).toContain(`"${bad}" is not an allowed command`);
    }
  });

  it('checks wrappers and what they run', () => {
    for (const [line, bad] of [
      ['sudo rm -rf /', 'rm'],
      ['sudo -u root rm x', 'rm'],
      ['env A=1 rm x', 'rm'],
      ['env -u HOME rm x', 'rm'],
      ['xargs rm < list', 'rm'],
      ['ls | xargs -n 1 -I {} rm {}', 'rm'],
      ['timeout 5 rm x', 'rm'],
      ['timeout -s KILL 5 sudo rm x', 'rm'],
      ['nohup curl x &', 'curl'],
      ['find . -name x -exec rm {} ;', 'rm'],
      ['nice rm x', 'nice'],
    ]) {
      expect(reason(line as string), line).toContain(`"${bad}" is not an allowed command`);
    }
    expect(check('sudo ls /root').ok).toBe(true);
    expect(check('timeout 5 cat f').ok).toBe(true);
  });

  it('refuses substitutions anywhere', () => {
    expect(reason('echo $(rm x)')).toBe(
      'Refused: the command uses command substitution $(…), which is not allowed when commands are restricted.',
    );
    expect(reason('echo "$(ls)"')).toContain('command substitution $(…)');
    expect(reason('echo `ls`')).toContain('backtick command substitution');
    expect(reason('cat <(ls)')).toContain('process substitution');
    expect(reason('ls >(cat)')).toContain('process substitution');
    expect(reason("echo '$(ls)'")).toBe('ALLOWED');
  });

  it('refuses expansions in command position', () => {
    for (const line of [
      '$CMD x',
      '"$CMD" x',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion, not a template
      '${X} y',
      '/usr/bin/r? x',
      'l* x',
      '{rm,x}',
      '~/bin/rm',
      'ls; $X',
    ]) {
      expect(reason(line), line).toContain('would be expanded by the shell');
    }
  });

  it('refuses dangerous assignments, eval-like builtins and functions; reads here-documents to their end', () => {
    expect(reason('PATH=/tmp ls')).toBe('Refused: assigning PATH can change which program runs.');
    expect(reason('env LD_PRELOAD=x.so ls')).toContain('assigning LD_PRELOAD');
    expect(reason('eval rm x')).toContain('"eval" can run arbitrary code');
    expect(reason('exec rm')).toContain('"exec" can run arbitrary code');
    expect(reason('. ./script')).toContain('"." can run arbitrary code');
    expect(reason('f() { rm x; }; f')).toContain('defining shell functions');
    expect(reason('cat <<EOF\nrm\nEOF')).toBe('ALLOWED');
    expect(reason('cat <<EOF\n$(rm x)\nEOF')).toContain('command substitution $(…) in a here-document');
    expect(reason("cat <<'EOF'\n$(not run)\nEOF\nls")).toBe('ALLOWED');
    expect(reason('cat <<EOF\nrm')).toContain('unterminated here-document');
    expect(reason('cat <<EOF\nx\nEOF\nrm x')).toContain('"rm" is not an allowed command');
    expect(reason('echo "unterminated')).toContain('unterminated double quote');
  });

  it('a program given by path must be listed with that path', () => {
    expect(reason('/tmp/ls')).toContain('must be listed with that exact path');
    expect(reason('wc -l')).toContain('"wc" is not an allowed command');
  });
});
