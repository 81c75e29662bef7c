package org.restack.demo;

import java.util.ArrayList;
import java.util.List;

public class Main {
  public static void main(String[] args) {
    int scenario = 0;
    // "messages": exceptions whose message names app classes (restored by the retracer too).
    List<Runnable> chosen = args.length > 0 && args[0].equals("messages") ? messageScenarios() : scenarios();
    for (Runnable r : chosen) {
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

  static List<Runnable> messageScenarios() {
    List<Runnable> list = new ArrayList<>();
    list.add(() -> castToStage(new Cart(2)));
    list.add(() -> castToCart(new Pipeline.Stage(v -> v)));
    list.add(Main::wrappedCause);
    list.add(Main::storeIntoCarts);
    return list;
  }

  // An app exception thrown as the cause of another: the outer message is the cause's toString().
  static final class Rejected extends RuntimeException {
    Rejected(String why) {
      super(why);
    }
  }

  static void reject(String why) {
    throw new Rejected(why);
  }

  static void wrappedCause() {
    try {
      reject("negative qty");
    } catch (Rejected e) {
      throw new RuntimeException(e);
    }
  }

  // HotSpot's ArrayStoreException message is the stored object's class.
  static void storeIntoCarts() {
    Object[] carts = new Cart[1];
    carts[0] = new Pipeline.Stage(v -> v);
    System.out.println(carts[0]);
  }

  static int castToStage(Object value) {
    return ((Pipeline.Stage) value).apply(1);
  }

  static int castToCart(Object value) {
    return ((Cart) value).total();
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
