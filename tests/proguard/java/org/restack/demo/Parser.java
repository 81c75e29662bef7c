package org.restack.demo;

final class Parser {
  private Parser() {}

  static int parseAll(String[] values) {
    int sum = 0;
    for (String value : values) {
      sum += parseOne(value);
    }
    return sum;
  }

  private static int parseOne(String value) {
    return checked(value.trim());
  }

  private static int checked(String value) {
    return Integer.parseInt(value);
  }
}
