package org.restack.demo;

import java.util.ArrayList;
import java.util.List;

public class Main {
  public static void main(String[] args) {
    int scenario = 0;
    for (Runnable r : scenarios()) {
      System.out.println("=== scenario " + scenario++);
      try {
        r.run();
      } catch (Throwable t) {
        t.printStackTrace(System.out);
      }
    }
  }

  static List<Runnable> scenarios() {
    List<Runnable> list = new ArrayList<>();
    list.add(() -> new Cart(3).checkout(-1));
    list.add(() -> Parser.parseAll(new String[] {"1", "2", "x"}));
    list.add(() -> new Cart(0).total());
    list.add(Main::wrapped);
    list.add(() -> suppressed());
    list.add(() -> Pipeline.run(5, v -> v * 2));
    return list;
  }

  static void wrapped() {
    try {
      Parser.parseAll(new String[] {"", "7"});
    } catch (NumberFormatException e) {
      throw new IllegalStateException("wrapped", e);
    }
  }

  static void suppressed() {
    IllegalStateException main = new IllegalStateException("main failure");
    try {
      new Cart(1).checkout(0);
    } catch (RuntimeException e) {
      main.addSuppressed(e);
    }
    throw main;
  }
}
