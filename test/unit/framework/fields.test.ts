import { describe, expect, it } from 'vitest';
import { CofferError } from '../../../src/framework/errors';
import { convertField, FieldData, type FieldType } from '../../../src/framework/fields';

describe('weak typing (Vault FieldData)', () => {
  it.each<[FieldType, unknown, unknown]>([
    ['string', 'a', 'a'],
    ['string', 12, '12'],
    ['string', true, '1'],
    ['lowercase-string', 'MiXed', 'mixed'],
    ['int', 5, 5],
    ['int', '42', 42],
    ['int', ' -7 ', -7],
    ['int', true, 1],
    ['bool', true, true],
    ['bool', 'true', true],
    ['bool', 'T', true],
    ['bool', '0', false],
    ['bool', 0, false],
    ['bool', 2, true],
    ['duration', '1h', 3600],
    ['duration', 60, 60],
    ['duration', '120', 120],
    ['signed-duration', '-1m', -60],
    ['string-list', ['a', 'b'], ['a', 'b']],
    ['string-list', 'a,b', ['a,b']],
    ['comma-string-list', 'a, b,,c', ['a', 'b', 'c']],
    ['comma-string-list', ['a', 'b,c'], ['a', 'b', 'c']],
    ['comma-string-list', '', []],
    ['comma-int-list', '1,2', [1, 2]],
    ['comma-int-list', [3, '4'], [3, 4]],
    ['map', { a: 1 }, { a: 1 }],
    ['string-map', { a: 1, b: 'x' }, { a: '1', b: 'x' }],
    ['string-map', ['a=1', 'b=x=y'], { a: '1', b: 'x=y' }],
    ['string-map', 'a=1,b=2', { a: '1', b: '2' }],
  ])('%s accepts %j', (type, input, expected) => {
    expect(convertField(type, input)).toEqual(expected);
  });

  it.each<[FieldType, unknown]>([
    ['string', ''],
    ['lowercase-string', ''],
    ['int', 0],
    ['bool', false],
    ['duration', 0],
    ['signed-duration', 0],
    ['string-list', []],
    ['comma-string-list', []],
    ['comma-int-list', []],
    ['map', {}],
    ['string-map', {}],
    ['any', null],
  ])('%s takes JSON null as its zero value %j', (type, zero) => {
    expect(convertField(type, null)).toEqual(zero);
  });

  it('takes null inside lists and maps as the empty string', () => {
    expect(convertField('string-map', { a: null, b: 'x' })).toEqual({ a: '', b: 'x' });
    expect(convertField('string-list', ['a', null])).toEqual(['a', '']);
    expect(convertField('comma-string-list', ['a', null])).toEqual(['a']);
  });

  it.each<[FieldType, unknown]>([
    ['int', 'abc'],
    ['int', 1.5],
    ['int', '9007199254740993'],
    ['bool', 'yes'],
    ['duration', 'forever'],
    ['duration', '-1s'],
    ['map', [1]],
    ['map', 'a'],
    ['string', { a: 1 }],
    ['string-map', ['novalue']],
  ])('%s refuses %j', (type, input) => {
    expect(() => convertField(type, input)).toThrow();
  });
});

describe('FieldData', () => {
  const schema = {
    ttl: { type: 'duration' as const, description: 'ttl', default: '1h' },
    name: { type: 'string' as const, description: 'name', required: true },
    mode: { type: 'string' as const, description: 'mode', allowed: ['a', 'b'] },
    count: { type: 'int' as const, description: 'count' },
  };

  it('applies defaults and zero values', () => {
    const f = new FieldData(schema, { name: 'x' });
    f.validate();
    expect(f.get('ttl')).toBe(3600);
    expect(f.get('count')).toBe(0);
    expect(f.has('count')).toBe(false);
  });

  it('reports conversion errors as 400s naming the field', () => {
    const f = new FieldData(schema, { name: 'x', ttl: 'soon' });
    try {
      f.validate();
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(CofferError);
      expect((e as CofferError).status).toBe(400);
      expect((e as CofferError).errors[0]).toBe('error converting input "soon" for field "ttl": time: invalid duration "soon"');
    }
  });

  it('refuses missing required fields and disallowed values', () => {
    expect(() => new FieldData(schema, {}).validate()).toThrow('missing required field "name"');
    expect(() => new FieldData(schema, { name: 'x', mode: 'c' }).validate()).toThrow('allowed values are a, b');
  });

  it('counts a null field as present, with its zero value over the default', () => {
    const f = new FieldData(schema, { name: null, ttl: null, count: null });
    f.validate();
    expect(f.has('ttl')).toBe(true);
    expect(f.get('ttl')).toBe(0);
    expect(f.get('name')).toBe('');
    expect(f.get('count')).toBe(0);
  });

  it('leaves a nullIsUnset field unset by null, so its default applies', () => {
    const f = new FieldData({ renewable: { type: 'bool', description: 'r', default: true, nullIsUnset: true } }, { renewable: null });
    f.validate();
    expect(f.has('renewable')).toBe(false);
    expect(f.get('renewable')).toBe(true);
  });

  it('lists unknown fields', () => {
    const f = new FieldData(schema, { name: 'x', extra: 1, other: 2 });
    expect(f.unknownFields()).toEqual(['extra', 'other']);
  });
});
