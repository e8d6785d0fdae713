// Binary operator precedence, from the Sentinel language specification ("Operators" > "Operator
// Precedence"); higher binds tighter, and every level associates to the left. Unary operators
// (`not`, `!`, `-`, `+`) bind tighter than all of these.
//
//   6  *  /  %
//   5  +  -
//   4  else
//   3  ==  !=  <  <=  >  >=  is  is not  matches  not matches  contains  not contains  in  not in
//   2  and
//   1  or  xor
//
// The spec lists `is empty` / `is not empty` / `is defined` / `is not defined` with the unary
// operators but writes them after their operand; they are parsed as postfix forms of `is`, at its
// level 3, so `a + b is empty` means `(a + b) is empty` and `x is empty and y` needs no parentheses.

import type { BinaryOp } from './ast';

export const BINARY_PRECEDENCE: Readonly<Record<BinaryOp, number>> = {
  '*': 6, '/': 6, '%': 6,
  '+': 5, '-': 5,
  else: 4,
  '==': 3, '!=': 3, '<': 3, '<=': 3, '>': 3, '>=': 3,
  is: 3, 'is not': 3, matches: 3, 'not matches': 3, contains: 3, 'not contains': 3, in: 3, 'not in': 3,
  and: 2,
  or: 1, xor: 1,
};

/** Level of the postfix emptiness and definedness checks (that of `is`). */
export const POSTFIX_IS_PRECEDENCE = 3;
