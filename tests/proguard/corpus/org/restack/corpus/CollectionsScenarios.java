package org.restack.corpus;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.commons.collections.Closure;
import org.apache.commons.collections.ClosureUtils;
import org.apache.commons.collections.CollectionUtils;
import org.apache.commons.collections.ComparatorUtils;
import org.apache.commons.collections.IteratorUtils;
import org.apache.commons.collections.ListUtils;
import org.apache.commons.collections.PredicateUtils;
import org.apache.commons.collections.Transformer;
import org.apache.commons.collections.TransformerUtils;
import org.apache.commons.collections.buffer.CircularFifoBuffer;
import org.apache.commons.collections.list.FixedSizeList;
import org.apache.commons.collections.list.UnmodifiableList;
import org.apache.commons.collections.map.LRUMap;
import org.apache.commons.collections.map.TransformedMap;

final class CollectionsScenarios {
  private CollectionsScenarios() {}

  static void addTo(List<Runnable> scenarios) {
    scenarios.add(() -> ListUtils.predicatedList(new ArrayList<>(), PredicateUtils.notNullPredicate()).add(null));
    scenarios.add(() -> new CircularFifoBuffer(2).remove());
    scenarios.add(() -> TransformerUtils.invokerTransformer("noSuchMethod").transform("x"));
    scenarios.add(() -> CollectionUtils.get(new ArrayList<>(Arrays.asList(1, 2)), 10));
    scenarios.add(() -> FixedSizeList.decorate(new ArrayList<>()).add("x"));
    scenarios.add(CollectionsScenarios::exhaustIterator);
    scenarios.add(() -> new LRUMap(0));
    scenarios.add(() -> UnmodifiableList.decorate(new ArrayList<>()).add("x"));
    scenarios.add(CollectionsScenarios::transformedPut);
    scenarios.add(() -> ComparatorUtils.naturalComparator().compare("a", Integer.valueOf(1)));
    scenarios.add(() -> CollectionUtils.forAllDo(Arrays.asList("a", "b"), failingClosure()));
    scenarios.add(CollectionsScenarios::chained);
    scenarios.add(() -> CollectionUtils.collect(Arrays.asList("1", "x"), parseTransformer()));
    scenarios.add(() -> TransformerUtils.instantiateTransformer().transform(Runnable.class));
  }

  static void exhaustIterator() {
    java.util.Iterator<?> it = IteratorUtils.arrayIterator(new int[] {1});
    it.next();
    it.next();
  }

  @SuppressWarnings("unchecked")
  static void transformedPut() {
    Map<Object, Object> map = TransformedMap.decorate(new HashMap<>(), null, TransformerUtils.exceptionTransformer());
    map.put("k", "v");
  }

  static Closure failingClosure() {
    return input -> {
      if ("b".equals(input)) throw new IllegalStateException("closure refused " + input);
    };
  }

  static Transformer parseTransformer() {
    return input -> Integer.parseInt((String) input);
  }

  static void chained() {
    Transformer chain = TransformerUtils.chainedTransformer(
        new Transformer[] {TransformerUtils.constantTransformer("v"), TransformerUtils.asTransformer(ClosureUtils.exceptionClosure())});
    chain.transform(null);
  }
}
