// infra/arrow-functions.ts: an arrow that reads nothing from the function around it becomes
// the same function written with `function`; one that reads `this`, `arguments`, `super` or
// `new.target` stays an arrow.
import { runInNewContext } from 'node:vm';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { functionsForArrows } from '../../infra/arrow-functions.js';

const rewrite = (source: string, path = 'module.js') => functionsForArrows(ts, path, source);

describe('functionsForArrows', () => {
  it('writes expression and block bodies, async arrows and a lone parameter as functions', () => {
    expect(rewrite('const f = (a, b) => a + b;')).toBe('const f = function (a, b)  { return a + b; };');
    expect(rewrite('const f = async x => { await x; };')).toBe('const f = async function (x)  { await x; };');
    expect(rewrite('const o = () => ({ a: 1 });')).toBe('const o = function ()  { return ({ a: 1 }); };');
    expect(rewrite('f(a => a, (b) => b);')).toBe('f(function (a)  { return a; }, function (b)  { return b; });');
  });

  it('nests: an arrow returning an arrow, and one in a default value', () => {
    expect(rewrite('const g = x => y => x + y;')).toBe('const g = function (x)  { return function (y)  { return x + y; }; };');
    expect(rewrite('const v = ({ b = () => 2 }) => b();')).toBe('const v = function ({ b = function ()  { return 2; } })  { return b(); };');
  });

  it('keeps minified code parseable: `async(x)=>` becomes `async function(x)`', () => {
    expect(rewrite('return(async()=>{let h=await a})')).toBe('return(async function (){let h=await a})');
    expect(rewrite('return()=>1')).toBe('return function (){ return 1; }');
    expect(rewrite('f=async x=>x')).toBe('f=async function (x){ return x; }');
  });

  it('ends the statement where the arrow ended it: a next line starting with ( [ or a template stays its own', () => {
    expect(rewrite('const f = () => {}\n(g || h)()')).toBe('const f = function ()  {};\n(g || h)()');
    expect(rewrite('const f = x => () => {}\n[a].map(run)')).toBe('const f = function (x)  { return function ()  {};; };\n[a].map(run)');
    expect(rewrite('class A { h = () => {}\n [Symbol.iterator]() {} }')).toBe('class A { h = function ()  {};\n [Symbol.iterator]() {} }');
    // Inside an expression the next token is no statement's start.
    expect(rewrite('f(() => {}\n, 1)')).toBe('f(function ()  {}\n, 1)');
  });

  it('keeps TypeScript: type parameters, parameter and return types', () => {
    expect(rewrite('const g = <T,>(x: T): T => x;', 'module.ts')).toBe('const g = function <T,>(x: T): T  { return x; };');
  });

  it('leaves an arrow that reads this, arguments, super or new.target, whatever encloses one, and one starting a statement', () => {
    for (const source of [
      'class A { h = (d) => this.x + d; }',
      'class B extends C { constructor() { super(); this.on("x", () => this.v); } }',
      'function f() { return () => arguments[0]; }',
      'class D extends E { m() { return () => super.m(); } }',
      'function N() { return () => new.target; }',
      'const outer = () => () => this;',
      'x => x;',
      // At a statement's start a `function` would be a declaration.
      'a => a, b();',
      'export default () => 1;',
    ])
      expect(rewrite(source)).toBe(source);
  });

  it('gives the same answers as the arrows it replaces', async () => {
    const source = `
      const add = (a, b = 2) => a + b;
      const curry = (x) => (y) => [x, y];
      const spread = (...xs) => xs.length;
      const pick = ({ a, b: [c] }) => ({ a, c });
      const later = async (v) => v * 2;
      result = { add: add(1), curry: curry(1)(2), spread: spread(1, 2, 3), pick: pick({ a: 1, b: [3] }), name: add.name, length: add.length, later: later(2) };`;
    const run = async (code: string) => {
      const context: { result?: Record<string, unknown> } = {};
      runInNewContext(code, context);
      return JSON.stringify({ ...context.result, later: await context.result!.later });
    };
    const rewritten = rewrite(source);
    expect(rewritten).not.toContain('=>');
    const expected = JSON.stringify({ add: 3, curry: [1, 2], spread: 3, pick: { a: 1, c: 3 }, name: 'add', length: 1, later: 4 });
    expect(await run(source)).toBe(expected);
    expect(await run(rewritten)).toBe(expected);
  });
});
