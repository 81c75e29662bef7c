package org.restack.corpus;

import java.util.ArrayList;
import java.util.List;

// Driver of the Java accuracy corpus (tests/proguard/accuracy_corpus_test.cc): every scenario
// makes a real library (Commons Collections, Jackson) throw from inside its own code, and the
// trace is printed after a "=== scenario N" line. Obfuscated together with the libraries, the
// program prints the same traces with obfuscated names; restored, they must read as these.
public class Main {
  public static void main(String[] args) {
    // The argument names the library whose scenarios run: "collections" or "jackson".
    List<Runnable> scenarios = new ArrayList<>();
    if (args.length > 0 && args[0].equals("jackson")) {
      JacksonScenarios.addTo(scenarios);
    } else {
      CollectionsScenarios.addTo(scenarios);
    }
    int index = 0;
    for (Runnable scenario : scenarios) {
      System.out.println("=== scenario " + index++);
      try {
        scenario.run();
        System.out.println("no exception");
      } catch (Throwable t) {
        t.printStackTrace(System.out);
      }
    }
  }
}
