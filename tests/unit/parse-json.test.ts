import { exactNumber, parseJson } from '../../src/http/parse-json';

describe('exactNumber', () => {
  it.each([
    ['0', 0],
    ['-0', 0],
    ['42', 42],
    ['7.0', 7],
    ['7e2', 700],
    ['7E+2', 700],
    ['1500e-3', 1.5],
    ['100e-2', 1],
    ['0.000', 0],
    ['9007199254740991', 9007199254740991],
  ])('when the text is %s, then the value is the number %p', (text, expected) => {
    expect(exactNumber(text)).toBe(expected);
  });

  it.each([
    ['9007199254740993', 9007199254740993n],
    ['-9007199254740993', -9007199254740993n],
    ['9223372036854775807', 9223372036854775807n],
    ['9.223372036854775807e18', 9223372036854775807n],
    ['-9223372036854775808', -9223372036854775808n],
    ['9999999999999999999', 9999999999999999999n],
  ])('when the text is %s, then the value is the exact bigint', (text, expected) => {
    expect(exactNumber(text)).toBe(expected);
  });

  it.each(['1.5', '1e-7', '1.0000000000000001', '12345678901234567890', '1e400', '1e99999999999999999999'])(
    'when the text is %s, then the value is no integer that fits int64',
    (text) => {
      const value = exactNumber(text);
      expect(typeof value).toBe('number');
      expect(Number.isSafeInteger(value)).toBe(false);
    },
  );
});

describe('parseJson', () => {
  it('when every number is a short integer, then it equals JSON.parse', () => {
    const text = '{"id": 12, "name": "x", "nested": {"n": [1, -2, 300000000000000]}}';

    expect(parseJson(text)).toEqual(JSON.parse(text));
  });

  it('when a number needs exactness, then it comes back exact and the rest is unchanged', () => {
    expect(parseJson('{"id": 9007199254740993, "name": "e and 1.5 in a string", "ratio": 0.25}')).toEqual({
      id: 9007199254740993n,
      name: 'e and 1.5 in a string',
      ratio: 0.25,
    });
  });

  it('when the text is malformed, then it throws a SyntaxError with a position and no copy of the input', () => {
    expect(() => parseJson('{"id": 1, "name": "private"')).toThrow(/position \d+/);
    expect(() => parseJson('{"id": 1, "name": "private"')).not.toThrow(/private/);
  });
});
